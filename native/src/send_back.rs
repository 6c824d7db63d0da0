//! The headers of a failed message's send-back to a delay level, built in one pass over
//! its properties: the counterpart of `park` of `sendback_properties`, which
//! `rmqcompat.consumer.sendback_record.send_back_record` calls it for.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};

use crate::message_ext::{field, Field};
use crate::{decimal_of, python_attr, utf8};

/// Properties the send-back does not carry: the limit RocketMQ passes in its request
/// header (`MAX_RECONSUME_TIMES`), those of one delivery (`props.TRANSIENT`), and those
/// parking sets again last.
const DROPPED: [&str; 10] = [
    "MAX_RECONSUME_TIMES",
    "DUE_TIME",
    "DELAY",
    "REAL_TOPIC",
    "REAL_QID",
    "TIMER_DELIVER_MS",
    "TIMER_ENQUEUE_MS",
    "TIMER_DEQUEUE_MS",
    "TIMER_OUT_MS",
    "CONSUME_START_TIME",
];
/// Properties that keep their first value, added in this order where missing.
const FIRST_VALUES: [&str; 4] = [
    "RETRY_TOPIC",
    "ORIGIN_MESSAGE_ID",
    "UNIQ_KEY",
    "BORN_TIMESTAMP",
];
const RECONSUME_TIME: &str = "RECONSUME_TIME";
/// RocketMQ's reconsume count is a Java int.
const INT_MAX: i64 = i32::MAX as i64;

/// The headers of `msg` (whose delivery with the stored count `reconsume_times` failed,
/// its `properties` an exact dict) sent back to `level`, bound for `real_topic` (a name
/// already checked) and due at `due_ms`: what `park(..., sendback_properties(msg,
/// msg.topic, reconsume_times), ...)` writes, in its order.
#[pyfunction]
pub fn send_back_headers<'py>(
    msg: &Bound<'py, PyAny>,
    reconsume_times: &Bound<'py, PyAny>,
    real_topic: &Bound<'py, PyAny>,
    level: &Bound<'py, PyAny>,
    due_ms: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let py = msg.py();
    let properties = field(msg, Field::Properties)?.cast_into_exact::<PyDict>()?;
    // evaluated before the properties are read, as sendback_properties does
    let born = decimal_of(&field(msg, Field::BornTimestamp)?)?;
    let reconsume = next_reconsume_time(reconsume_times)?;
    let headers = PyList::empty(py);
    let mut missing = [true; 4];
    let mut reconsume_missing = true;
    for (name, value) in properties.iter() {
        // a name that is no str (or not UTF-8) is none of these: kept, as Python keeps it
        let text = name
            .cast::<PyString>()
            .ok()
            .and_then(|text| text.to_cow().ok());
        let text = text.as_deref();
        if text.is_some_and(|text| DROPPED.contains(&text)) {
            continue;
        }
        if text == Some(RECONSUME_TIME) {
            reconsume_missing = false;
            headers.append(PyTuple::new(py, [name, reconsume.clone()])?)?;
            continue;
        }
        if let Some(at) = FIRST_VALUES.iter().position(|first| text == Some(*first)) {
            missing[at] = false;
        }
        headers.append(PyTuple::new(py, [name, utf8(py, &value)?])?)?;
    }
    if missing[0] {
        let topic = utf8(py, &field(msg, Field::Topic)?)?;
        headers.append((intern!(py, "RETRY_TOPIC"), topic))?;
    }
    for (at, name) in [
        (1, intern!(py, "ORIGIN_MESSAGE_ID")),
        (2, intern!(py, "UNIQ_KEY")),
    ] {
        if missing[at] {
            headers.append((name, utf8(py, &field(msg, Field::MsgId)?)?))?;
        }
    }
    if missing[3] {
        headers.append((intern!(py, "BORN_TIMESTAMP"), born))?;
    }
    if reconsume_missing {
        headers.append((intern!(py, "RECONSUME_TIME"), reconsume))?;
    }
    headers.append((intern!(py, "REAL_TOPIC"), utf8(py, real_topic)?))?;
    headers.append((intern!(py, "REAL_QID"), PyBytes::new(py, b"-1")))?;
    headers.append((intern!(py, "DELAY"), decimal_of(level)?))?;
    headers.append((intern!(py, "DUE_TIME"), decimal_of(due_ms)?))?;
    Ok(headers)
}

/// `encode_int(clamp_reconsume_times(stored) + 1)`, encoded: the count the send-back
/// carries.
fn next_reconsume_time<'py>(stored: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = stored.py();
    if stored.is_exact_instance_of::<PyInt>() {
        if let Ok(count) = stored.extract::<i64>() {
            let next = count.clamp(0, INT_MAX) + 1;
            return Ok(PyBytes::new(py, next.to_string().as_bytes()).into_any());
        }
    }
    let clamped =
        python_attr(py, "rmqcompat.properties", "clamp_reconsume_times")?.call1((stored,))?;
    decimal_of(&clamped.add(1)?)
}
