//! rmqcompat's compiled core: per-message work of the hot paths, each function the exact
//! counterpart of a pure-Python function that stays the reference (`rmqcompat/core.py`
//! says which one is active; tests run the same inputs through both).

use pyo3::exceptions::{
    PyAttributeError, PyException, PyIndexError, PyKeyError, PyOverflowError, PyTypeError,
    PyUnicodeDecodeError, PyValueError,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

mod bound_call;
mod consume_batch;
mod deliveries;
mod direct_fetch;
mod direct_produce;
mod encodings;
mod holding;
mod intake;
mod ledger_page;
mod message_ext;

use encodings::Encodings;
use message_ext::{field, Field, Fields};
use received::KeptEvents;
use record::Accessor;
mod plain_lane;
mod process_queue;
mod rdkafka;
mod received;
mod record;
mod replay;
mod run;
mod send_back;
mod slots;

/// Leaves `object`, a new object of a GC type whose contents cannot lead back to it yet,
/// out of the cyclic collector's sight (as CPython leaves tuples and dicts that hold
/// nothing it needs to see); [`track`] lets the collector see it again.
pub fn untrack(object: &Bound<'_, PyAny>) {
    // SAFETY: an object of a GC type (every PyO3 class and every slotted Python class is
    // one), with the GIL held; untracking an untracked object is allowed.
    unsafe { pyo3::ffi::PyObject_GC_UnTrack(object.as_ptr().cast()) };
}

/// Lets the collector see `object`, an object of a GC type that was left out of its sight
/// when built, again (unless it already does): it now holds what may lead back to it.
pub fn track(object: &Bound<'_, PyAny>) {
    // SAFETY: an object of a GC type, with the GIL held; tracked only if it is not.
    unsafe {
        let object = object.as_ptr();
        if pyo3::ffi::PyObject_GC_IsTracked(object) == 0 {
            pyo3::ffi::PyObject_GC_Track(object.cast());
        }
    }
}

/// Kafka headers `[(name, value), ...]` as RocketMQ properties `{name: value}`, or `None`
/// when they are not a list of well-formed properties (a name that is not text, a `None`
/// or non-bytes value, a value that is not UTF-8, a repeated name): the caller then takes
/// the validating Python codec, which names the problem. The counterpart of
/// `rmqcompat.wire.decode_well_formed`; both lead `decode_properties` to the same result.
#[pyfunction]
fn decode_headers<'py>(
    py: Python<'py>,
    headers: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Ok(headers) = headers.cast::<PyList>() else {
        return Ok(None);
    };
    let properties = Properties::new(py);
    for item in headers.iter() {
        let Ok(pair) = item.cast::<PyTuple>() else {
            return Ok(None);
        };
        if pair.len() != 2 {
            return Ok(None);
        }
        let name = pair.get_item(0)?;
        let Ok(name) = name.cast::<PyString>() else {
            return Ok(None);
        };
        let value = pair.get_item(1)?;
        let Ok(bytes) = value.cast::<PyBytes>() else {
            return Ok(None);
        };
        if !properties.add(name, bytes.as_bytes())? {
            return Ok(None);
        }
    }
    Ok(Some(properties.into_dict()))
}

/// RocketMQ properties read from a record's headers one by one: the rule of
/// `decode_headers` for a header whose name is text and whose value is bytes, shared with
/// the direct fetch's records (`direct_fetch::properties_of`).
pub struct Properties<'py> {
    dict: Bound<'py, PyDict>,
}

impl<'py> Properties<'py> {
    pub fn new(py: Python<'py>) -> Self {
        Self {
            dict: PyDict::new(py),
        }
    }

    /// Adds `name: value`; false (the headers are not well-formed) where `value` is not
    /// UTF-8 or `name` was added before.
    pub fn add(&self, name: &Bound<'py, PyString>, value: &[u8]) -> PyResult<bool> {
        let py = self.dict.py();
        // one UTF-8 check, CPython's own: it rejects what str.decode("utf-8") rejects
        let text = match PyString::from_bytes(py, value) {
            Ok(text) => text,
            Err(err) if err.is_instance_of::<PyUnicodeDecodeError>(py) => return Ok(false),
            Err(err) => return Err(err),
        };
        let before = self.dict.len();
        self.dict.set_item(name, text)?;
        Ok(self.dict.len() != before) // else a repeated name
    }

    pub fn into_dict(self) -> Bound<'py, PyDict> {
        self.dict
    }
}

/// A property read by `plain_decode`: its value when it is plain ASCII digits (at most
/// 19) up to `high`, `default` when it is absent, `None` for anything else. The
/// counterpart of `rmqcompat.wire._plain_number`.
fn plain_number(
    properties: &Bound<'_, PyDict>,
    name: &Bound<'_, PyString>,
    high: i64,
    default: i64,
) -> Option<i64> {
    let Ok(found) = properties.get_item(name) else {
        return None;
    };
    let Some(value) = found else {
        return Some(default);
    };
    plain_digits(value.cast::<PyString>().ok()?.to_str().ok()?, high)
}

/// `text` as the number `plain_decode` reads from a property: plain ASCII digits (at most
/// 19) up to `high`, else None.
pub(crate) fn plain_digits(text: &str, high: i64) -> Option<i64> {
    if text.is_empty() || text.len() > 19 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // 19 digits may pass a long: the parse fails then, and so does the bound
    text.parse::<i64>().ok().filter(|number| *number <= high)
}

/// The common case of decoding a consumed record into the `MessageExt` a listener sees,
/// or `None` for the rest (the general path decides those and names what is wrong): the
/// counterpart of `rmqcompat.wire.plain_decode` (see it for the case).
#[pyfunction]
fn plain_decode<'py>(
    py: Python<'py>,
    record: &Bound<'py, PyAny>,
    physical: &Bound<'py, PyString>,
    logical: &Bound<'py, PyAny>,
    partition: &Bound<'py, PyAny>,
    offset: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let where_ = Place {
        physical,
        logical,
        partition,
    };
    if let Ok(direct) = record.cast::<direct_fetch::DirectRecord>() {
        return match direct.get().plain_parts(py)? {
            Some(parts) => plain_message(py, parts, &where_, offset),
            None => Ok(None),
        };
    }
    let headers = record::call(record, Accessor::HEADERS)?;
    let properties = if headers.is_none() {
        PyDict::new(py)
    } else {
        match decode_headers(py, &headers)? {
            Some(properties) => properties,
            None => return Ok(None),
        }
    };
    let Ok((_, store_timestamp)) =
        record::call(record, Accessor::TIMESTAMP)?.extract::<(Bound<'py, PyAny>, i64)>()
    else {
        return Ok(None);
    };
    let parts = PlainParts {
        properties,
        store_timestamp,
        value: record::call(record, Accessor::VALUE)?,
        key: record::call(record, Accessor::KEY)?,
    };
    plain_message(py, parts, &where_, offset)
}

/// Where a consumed record was read: its physical topic, logical topic and partition.
pub struct Place<'a, 'py> {
    pub physical: &'a Bound<'py, PyString>,
    pub logical: &'a Bound<'py, PyAny>,
    pub partition: &'a Bound<'py, PyAny>,
}

/// What `plain_decode` reads of a record: its headers as properties (well-formed), its
/// timestamp in milliseconds, its value and its key.
pub struct PlainParts<'py> {
    pub properties: Bound<'py, PyDict>,
    pub store_timestamp: i64,
    pub value: Bound<'py, PyAny>,
    pub key: Bound<'py, PyAny>,
}

/// The rest of `plain_decode`, whatever the record was read from: the numbers in their
/// plain form, the body and the message id, or `None` for the general path.
pub fn plain_message<'py>(
    py: Python<'py>,
    parts: PlainParts<'py>,
    place: &Place<'_, 'py>,
    offset: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let PlainParts {
        properties,
        store_timestamp,
        value,
        key,
    } = parts;
    const INT_MAX: i64 = i32::MAX as i64;
    let numbers = (
        plain_number(
            &properties,
            intern!(py, "BORN_TIMESTAMP"),
            i64::MAX,
            store_timestamp,
        ),
        plain_number(&properties, intern!(py, "RECONSUME_TIME"), INT_MAX, 0),
        plain_number(&properties, intern!(py, "FLAG"), INT_MAX, 0),
    );
    let (Some(born), Some(reconsume), Some(_flag)) = numbers else {
        return Ok(None);
    };
    let body = if value.is_truthy()? {
        value
    } else {
        PyBytes::new(py, b"").into_any()
    };
    let msg_id = match properties.get_item(intern!(py, "UNIQ_KEY"))? {
        Some(id) if id.is_truthy()? => id,
        _ => {
            // `rmqcompat.wire.offset_message_id`, with each number as Python writes it
            let id = format!(
                "{}@{}@{}",
                place.physical.to_str()?,
                place.partition.str()?.to_str()?,
                offset.str()?.to_str()?
            );
            PyString::new(py, &id).into_any()
        }
    };
    let fields = [
        place.logical.clone(),
        body,
        msg_id,
        place.partition.clone(),
        offset.clone(),
        born.into_pyobject(py)?.into_any(),
        store_timestamp.into_pyobject(py)?.into_any(),
        reconsume.into_pyobject(py)?.into_any(),
        properties.into_any(),
        key,
    ];
    Ok(Some(message_ext::new_message_ext(py, fields)?))
}

/// Where Python's `seq[at]` reads in a sequence of `len` items (a negative `at` counts
/// from the end); `IndexError` (`"{what} index out of range"`) outside it.
pub(crate) fn sequence_index(at: isize, len: usize, what: &str) -> PyResult<usize> {
    let index = if at < 0 { at + len as isize } else { at };
    usize::try_from(index)
        .ok()
        .filter(|index| *index < len)
        .ok_or_else(|| PyIndexError::new_err(format!("{what} index out of range")))
}

/// Avro's zig-zag varint of `value`, appended to `out`.
pub(crate) fn put_long(out: &mut Vec<u8>, value: i64) {
    let mut n = ((value << 1) ^ (value >> 63)) as u64;
    while n >= 0x80 {
        out.push((n as u8 & 0x7F) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// An optional long (`["null", "long"]`) that is present: `02`, then the value; a Python
/// int outside a long raises `OverflowError`, as the Python encoder does.
fn put_some_long(out: &mut Vec<u8>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    let Ok(number) = value.extract::<i64>() else {
        return Err(PyOverflowError::new_err(format!(
            "{what} is outside an Avro long"
        )));
    };
    out.push(2);
    put_long(out, number);
    Ok(())
}

/// An optional int (`["null", "int"]`) that is present.
fn put_some_int(out: &mut Vec<u8>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    let Ok(number) = value.extract::<i32>() else {
        return Err(PyOverflowError::new_err(format!(
            "{what} is outside an Avro int"
        )));
    };
    out.push(2);
    put_long(out, i64::from(number));
    Ok(())
}

/// A string's UTF-8 (length first); text that cannot be UTF-8 (a lone surrogate) raises
/// `UnicodeEncodeError`, anything but text `AttributeError`, as `str.encode` would.
fn put_str(out: &mut Vec<u8>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let Ok(text) = value.cast::<PyString>() else {
        return Err(PyAttributeError::new_err(
            "a trace field that must be text is not",
        ));
    };
    let data = text.to_str()?.as_bytes();
    put_long(out, data.len() as i64);
    out.extend_from_slice(data);
    Ok(())
}

/// An optional string: `00` for `None`, else `02` and the string.
pub(crate) fn put_some_str(out: &mut Vec<u8>, value: Option<Bound<'_, PyAny>>) -> PyResult<()> {
    match value {
        Some(value) if !value.is_none() => {
            out.push(2);
            put_str(out, &value)
        }
        _ => {
            out.push(0);
            Ok(())
        }
    }
}

/// The fields of an event about a received message from its topic to its keys: topic,
/// physical topic (null), partition, offset, message id, origin id, tags and keys.
fn put_received(
    out: &mut Vec<u8>,
    msg: &Fields<'_, '_>,
    properties: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let py = properties.py();
    put_some_str(out, Some(msg.get(Field::Topic)?))?;
    out.push(0); // physical topic
    put_some_int(out, &msg.get(Field::QueueId)?, "queue id")?;
    put_some_long(out, &msg.get(Field::QueueOffset)?, "queue offset")?;
    put_str(out, &msg.get(Field::MsgId)?)?;
    for name in [
        intern!(py, "ORIGIN_MESSAGE_ID"),
        intern!(py, "TAGS"),
        intern!(py, "KEYS"),
    ] {
        put_some_str(out, get_property(properties, name)?)?;
    }
    Ok(())
}

/// The last fields of an event about a received message: its born time, no reason.
fn put_born_and_reason(out: &mut Vec<u8>, msg: &Fields<'_, '_>) -> PyResult<()> {
    let born = msg.get(Field::BornTimestamp)?;
    put_some_long(out, &born, "born time")?;
    out.push(0); // reason
    Ok(())
}

/// The CONSUME events of listener calls, each `(msgs, failed, duration_ms, late,
/// reconsumes)`, all after `head`: the counterpart of `rmqcompat.trace.bulk.consume_calls`
/// (`statuses`: each status's encoding, by name).
#[pyfunction]
fn consume_calls<'py>(
    head: &[u8],
    statuses: &Bound<'py, PyDict>,
    calls: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, Encodings>> {
    let py = calls.py();
    let mut events = Encodings::default();
    let status = |name: &Bound<'py, PyAny>| -> PyResult<Vec<u8>> {
        match statuses.get_item(name)? {
            Some(encoded) => Ok(encoded.cast::<PyBytes>()?.as_bytes().to_vec()),
            None => Err(PyKeyError::new_err(name.clone().unbind())),
        }
    };
    for call in calls.try_iter()? {
        let (msgs, failed, duration_ms, late, reconsumes): Five<'py> = call?.extract()?;
        // `_outcomes`: the duration first, then SUCCESS's and `late`'s encodings
        let mut took = Vec::with_capacity(11);
        put_some_long(&mut took, &duration_ms, "duration")?;
        let mut ok = status(intern!(py, "SUCCESS").as_any())?;
        let mut bad = status(&late)?;
        ok.extend_from_slice(&took);
        bad.extend_from_slice(&took);
        let call = CallEvents {
            head,
            ok: &ok,
            bad: &bad,
        };
        call.append(&mut events, &msgs, &failed, &reconsumes)?;
    }
    Bound::new(py, events)
}

/// What a listener call's CONSUME events share: the head, and the encoded status and
/// duration of its messages that succeeded (`ok`) and of those that failed (`bad`).
struct CallEvents<'a> {
    head: &'a [u8],
    ok: &'a [u8],
    bad: &'a [u8],
}

impl CallEvents<'_> {
    /// The CONSUME events of the call on `msgs` (see `rmqcompat.trace.bulk.consume_events`),
    /// appended to `events`.
    fn append<'py>(
        &self,
        events: &mut Encodings,
        msgs: &Bound<'py, PyAny>,
        failed: &Bound<'py, PyAny>,
        reconsumes: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let mut i = 0;
        let any_failed = failed.is_truthy()?; // most calls: none, and no test an event
        encode_into(events, msgs, |out, msg| {
            let reconsume = if reconsumes.is_none() {
                None
            } else {
                Some(reconsumes.get_item(i)?)
            };
            let outcome = if any_failed && failed.contains(i)? {
                self.bad
            } else {
                self.ok
            };
            i += 1;
            put_consume_event(out, self.head, outcome, &msg, reconsume)
        })
    }
}

/// The CONSUME event of `msg` after `head`: its fields up to its keys, `outcome` (the
/// call's status and duration, encoded), its reconsume count (`reconsume`, or its own),
/// then its born time (`rmqcompat.trace.bulk.consume_events`' event).
pub(crate) fn put_consume_event(
    out: &mut Vec<u8>,
    head: &[u8],
    outcome: &[u8],
    msg: &Bound<'_, PyAny>,
    reconsume: Option<Bound<'_, PyAny>>,
) -> PyResult<()> {
    let msg = Fields::of(msg)?;
    let properties = msg.get(Field::Properties)?;
    let reconsume = match reconsume {
        Some(count) => count,
        None => msg.get(Field::ReconsumeTimes)?,
    };
    out.extend_from_slice(head);
    put_received(out, &msg, &properties)?;
    out.extend_from_slice(outcome);
    put_some_int(out, &reconsume, "reconsume times")?;
    out.extend_from_slice(&[0, 0, 0]); // delay level, due time, target topic
    put_born_and_reason(out, &msg)
}

/// `props.encode_int(value).encode("utf-8")`: the decimal of `int(value)`.
pub(crate) fn decimal_of<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    let text = match value.extract::<i64>() {
        Ok(number) if value.is_exact_instance_of::<pyo3::types::PyInt>() => number.to_string(),
        _ => py
            .get_type::<pyo3::types::PyInt>()
            .call1((value,))?
            .str()?
            .to_str()?
            .to_owned(),
    };
    Ok(PyBytes::new(py, text.as_bytes()).into_any())
}

/// The headers of a message sent at once, or `None` where `build_record` must build them:
/// the counterpart of `rmqcompat.producer.records.plain_headers` (see it for the case).
#[pyfunction]
fn plain_headers<'py>(
    py: Python<'py>,
    msg: &Bound<'py, PyAny>,
    msg_id: &Bound<'py, PyAny>,
    now_ms: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    if msg.getattr(intern!(py, "properties"))?.is_truthy()?
        || !msg.getattr(intern!(py, "deliver_time_ms"))?.is_none()
        || msg.getattr(intern!(py, "delay_time_level"))?.gt(0)?
    {
        return Ok(None);
    }
    let headers = PyDict::new(py);
    let tags = msg.getattr(intern!(py, "tags"))?;
    if tags.is_truthy()? {
        headers.set_item(intern!(py, "TAGS"), utf8(py, &tags)?)?;
    }
    let keys = msg.getattr(intern!(py, "keys"))?;
    if keys.is_truthy()? {
        headers.set_item(intern!(py, "KEYS"), utf8(py, keys.str()?.as_any())?)?;
    }
    let flag = msg.getattr(intern!(py, "flag"))?;
    if flag.is_truthy()? {
        headers.set_item(intern!(py, "FLAG"), decimal_of(&flag)?)?;
    }
    headers.set_item(intern!(py, "UNIQ_KEY"), utf8(py, msg_id)?)?;
    headers.set_item(intern!(py, "BORN_TIMESTAMP"), decimal_of(now_ms)?)?;
    Ok(Some(headers))
}

/// About the size of one event's encoding, in bytes: room a buffer of events is given.
const EVENT_SIZE: usize = 160;

/// The encodings `encode` appends to the buffer for each of `items`, in order: the loop
/// every bulk encoder of trace events shares.
fn encode_each<'py>(
    items: &Bound<'py, PyAny>,
    encode: impl FnMut(&mut Vec<u8>, Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<Bound<'py, Encodings>> {
    let mut events = Encodings::with_capacity(items.len().unwrap_or(0), EVENT_SIZE);
    encode_into(&mut events, items, encode)?;
    Bound::new(items.py(), events)
}

/// `encode_each`, appending to `events`.
fn encode_into<'py>(
    events: &mut Encodings,
    items: &Bound<'py, PyAny>,
    mut encode: impl FnMut(&mut Vec<u8>, Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    for item in items.try_iter()? {
        let item = item?;
        events.write(|out| encode(out, item))?;
    }
    Ok(())
}

/// The PUBLISH events of acknowledged sends, each `(at_ms, message, msg_id,
/// physical_topic, born_ms, headers)`: the counterpart of
/// `rmqcompat.trace.bulk.publish_events` (see it and `_publish_event` for the fields).
#[pyfunction]
fn publish_events<'py>(
    py: Python<'py>,
    kind: &[u8],
    who: &[u8],
    acknowledged: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, Encodings>> {
    encode_each(acknowledged, |out, send| {
        let (at_ms, message, msg_id, physical_topic, born_ms, headers): Six<'py> =
            send.extract()?;
        let level = message.getattr(intern!(py, "delay_time_level"))?;
        let mut due_ms = message.getattr(intern!(py, "deliver_time_ms"))?;
        if due_ms.is_none() && level.is_truthy()? {
            due_ms = python_attr(py, "rmqcompat.parking", "stamped_due")?.call1((headers,))?;
        }
        let keys = message.getattr(intern!(py, "keys"))?;
        let keys = if keys.is_none() || keys.is_instance_of::<PyString>() {
            keys
        } else {
            python_attr(py, "rmqcompat.properties", "join_keys")?.call1((keys,))?
        };
        out.extend_from_slice(kind);
        put_long_of(out, &at_ms, "event time")?;
        out.extend_from_slice(who);
        out.push(0); // group
        put_some_str(out, Some(message.getattr(intern!(py, "topic"))?))?;
        put_some_str(out, Some(physical_topic))?;
        out.extend_from_slice(&[0, 0]); // partition, offset
        put_str(out, &msg_id)?;
        out.push(0); // origin msg id
        put_some_str(out, Some(message.getattr(intern!(py, "tags"))?))?;
        put_some_str(out, Some(keys))?;
        out.extend_from_slice(&[0, 0, 0]); // status, duration, reconsume times
        if level.is_truthy()? {
            put_some_int(out, &level, "delay level")?;
        } else {
            out.push(0);
        }
        put_optional_long(out, &due_ms, "due time")?;
        out.push(0); // target topic
        put_optional_long(out, &born_ms, "born time")?;
        out.push(0); // reason
        Ok(())
    })
}

/// One value of an event's input.
type Obj<'py> = Bound<'py, PyAny>;
/// Four values of an event's input, as a tuple unpacks them.
type Four<'py> = (Obj<'py>, Obj<'py>, Obj<'py>, Obj<'py>);
/// Five values of an event's input, as a tuple unpacks them.
type Five<'py> = (Obj<'py>, Obj<'py>, Obj<'py>, Obj<'py>, Obj<'py>);
/// Six values of an event's input, as a tuple unpacks them.
type Six<'py> = (Obj<'py>, Obj<'py>, Obj<'py>, Obj<'py>, Obj<'py>, Obj<'py>);

/// An optional long: `00` for `None`, else `02` and the value.
fn put_optional_long(out: &mut Vec<u8>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    if value.is_none() {
        out.push(0);
        Ok(())
    } else {
        put_some_long(out, value, what)
    }
}

/// The FORWARD events of forwarded parked records, each `(at_ms, source, properties,
/// due_ms)`: the counterpart of `rmqcompat.trace.bulk.forward_events` (see it and
/// `_forward_event` for the fields).
#[pyfunction]
fn forward_events<'py>(
    py: Python<'py>,
    kind: &[u8],
    who: &[u8],
    records: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, Encodings>> {
    let zero = 0i32.into_pyobject(py)?.into_any();
    let empty = PyString::new(py, "").into_any();
    encode_each(records, |out, record| {
        let (at_ms, source, properties, due_ms): Four<'py> = record.extract()?;
        let partition = or_else(record::call(&source, Accessor::PARTITION)?, &zero)?;
        let offset = or_else(record::call(&source, Accessor::OFFSET)?, &zero)?;
        let physical = or_else(record::call(&source, Accessor::TOPIC)?, &empty)?;
        let real_topic = or_default(
            get_property(&properties, intern!(py, "REAL_TOPIC"))?,
            &empty,
        );
        let msg_id = match get_property(&properties, intern!(py, "UNIQ_KEY"))? {
            Some(id) if id.is_truthy()? => id,
            _ => py
                .import(intern!(py, "rmqcompat.wire"))?
                .getattr(intern!(py, "offset_message_id"))?
                .call1((&physical, &partition, &offset))?,
        };
        let topic = or_default(
            get_property(&properties, intern!(py, "RETRY_TOPIC"))?,
            &real_topic,
        );
        out.extend_from_slice(kind);
        put_long_of(out, &at_ms, "event time")?;
        out.extend_from_slice(who);
        out.push(0); // group
        put_some_str(out, Some(topic))?;
        put_some_str(out, Some(physical))?;
        put_some_int(out, &partition, "partition")?;
        put_some_long(out, &offset, "offset")?;
        put_str(out, &msg_id)?;
        put_some_str(
            out,
            get_property(&properties, intern!(py, "ORIGIN_MESSAGE_ID"))?,
        )?;
        out.extend_from_slice(&[0, 0, 0, 0]); // tags, keys, status, duration
        for name in [intern!(py, "RECONSUME_TIME"), intern!(py, "DELAY")] {
            match int_property(&properties, name)? {
                Some(number) => {
                    out.push(2);
                    put_long(out, i64::from(number));
                }
                None => out.push(0),
            }
        }
        put_some_long(out, &due_ms, "due time")?;
        put_some_str(out, Some(real_topic))?;
        out.extend_from_slice(&[0, 0]); // born time, reason
        Ok(())
    })
}

/// The SEND_BACK events of stored send-backs, each `(at_ms, msg, reconsume_times, level,
/// due_ms, target_topic)`: the counterpart of `rmqcompat.trace.bulk.send_back_events`
/// (see it for the fields).
#[pyfunction]
fn send_back_events<'py>(
    kind: &[u8],
    who: &[u8],
    group: &[u8],
    sends: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, Encodings>> {
    encode_each(sends, |out, send| {
        let (at_ms, msg, reconsume_times, level, due_ms, target_topic): Six<'py> =
            send.extract()?;
        let msg = Fields::of(&msg)?;
        let properties = msg.get(Field::Properties)?;
        out.extend_from_slice(kind);
        put_long_of(out, &at_ms, "event time")?;
        out.extend_from_slice(who);
        out.extend_from_slice(group);
        put_received(out, &msg, &properties)?;
        out.extend_from_slice(&[0, 0]); // status, duration
        put_some_int(out, &reconsume_times, "reconsume times")?;
        put_some_int(out, &level, "delay level")?;
        put_optional_long(out, &due_ms, "due time")?;
        put_some_str(out, Some(target_topic))?;
        put_born_and_reason(out, &msg)?;
        Ok(())
    })
}

/// The REPLAY events of dead letters sent again, each holding its msg id, original topic,
/// the topic it was replayed to and its origin msg id at `places` (a ledger row's, read
/// in place): the counterpart of `rmqcompat.trace.bulk.replay_events` (see it), which
/// reads and encodes them in the same order.
#[pyfunction]
#[pyo3(signature = (head, reason, letters, places = (0, 1, 2, 3)))]
fn replay_events<'py>(
    head: &[u8],
    reason: &[u8],
    letters: &Bound<'py, PyAny>,
    places: (usize, usize, usize, usize),
) -> PyResult<Bound<'py, Encodings>> {
    let (at_id, at_topic, at_target, at_origin) = places;
    encode_each(letters, |out, letter| {
        out.extend_from_slice(head);
        put_some_str(out, Some(replay::field(&letter, at_topic)?))?;
        out.extend_from_slice(&[0, 0, 0]); // physical topic, partition, offset
        put_str(out, &replay::field(&letter, at_id)?)?;
        put_some_str(out, Some(replay::field(&letter, at_origin)?))?;
        out.extend_from_slice(&[0; 7]); // tags ... due time
        put_some_str(out, Some(replay::field(&letter, at_target)?))?;
        out.push(0); // born time
        out.extend_from_slice(reason);
        Ok(())
    })
}

/// `value or default`, as Python reads it.
fn or_else<'py>(
    value: Bound<'py, PyAny>,
    default: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(if value.is_truthy()? {
        value
    } else {
        default.clone()
    })
}

/// `properties.get(name, default)`: the property when present, else `default`.
fn or_default<'py>(
    value: Option<Bound<'py, PyAny>>,
    default: &Bound<'py, PyAny>,
) -> Bound<'py, PyAny> {
    value.unwrap_or_else(|| default.clone())
}

/// A long that is not optional: its varint alone.
fn put_long_of(out: &mut Vec<u8>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    let Ok(number) = value.extract::<i64>() else {
        return Err(PyOverflowError::new_err(format!(
            "{what} is outside an Avro long"
        )));
    };
    put_long(out, number);
    Ok(())
}

/// A property as an Avro int: a decimal of at most 10 ASCII digits (after an optional
/// `-`) within an int, else `None`; a value that is not text raises `TypeError`, as the
/// regular expression of `rmqcompat.trace.bulk._int_property` does.
fn int_property(
    properties: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
) -> PyResult<Option<i32>> {
    let Some(value) = get_property(properties, name)? else {
        return Ok(None);
    };
    if value.is_none() {
        return Ok(None);
    }
    let Ok(text) = value.cast::<PyString>() else {
        return Err(PyTypeError::new_err("a numeric trace property is not text"));
    };
    let Ok(text) = text.to_str() else {
        return Ok(None); // not UTF-8 (a lone surrogate): no decimal either
    };
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || digits.len() > 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    Ok(text.parse::<i64>().ok().and_then(|n| i32::try_from(n).ok()))
}

/// `properties.get(name)` (a dict's lookup without the method call where it is a dict).
fn get_property<'py>(
    properties: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if let Ok(dict) = properties.cast::<PyDict>() {
        return dict.get_item(name);
    }
    let value = properties.call_method1(intern!(properties.py(), "get"), (name,))?;
    Ok(if value.is_none() { None } else { Some(value) })
}

/// A part `pack_events` packs: encodings, events settlement noted, or the range of its
/// `bytes` among those held.
enum Part<'a> {
    Encoded(&'a Encodings),
    Kept(&'a KeptEvents),
    Loose(std::ops::Range<usize>),
}

/// An event `pack_events` writes: its bytes, or event `at` of noted ones.
enum Event<'a> {
    Bytes(&'a [u8]),
    Kept(&'a KeptEvents, usize),
}

impl Event<'_> {
    fn len(&self) -> usize {
        match self {
            Event::Bytes(data) => data.len(),
            Event::Kept(events, at) => events.event_len(*at),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Event::Bytes(data) => out.extend_from_slice(data),
            Event::Kept(events, at) => events.write_event(*at, out),
        }
    }
}

/// Noted CONSUME events from which `pack_events` writes its records without the GIL: the
/// kept fields they copy were written at fetch time and are read from memory, which the
/// data path's threads need not wait for. Encoded events (the caller's buffers, written
/// moments before) are copied with it held: giving it up and taking it back would cost
/// more.
const PACKED_WITHOUT_GIL: usize = 64;

/// The trace records of the events of `parts` (each a sequence of events' encodings: an
/// `Encodings`, `KeptEvents` or `bytes` objects), in order, as `(record, events in it)`:
/// each record is `header`, an Avro array block of its events and the array's end; it
/// holds at most `max_events` events and `max_bytes` of them, or one larger event alone.
/// The counterpart of `rmqcompat.trace.batch.pack_events`.
#[pyfunction]
fn pack_events<'py>(
    py: Python<'py>,
    parts: Vec<Bound<'py, PyAny>>,
    header: &[u8],
    max_events: usize,
    max_bytes: usize,
) -> PyResult<Bound<'py, PyList>> {
    if max_events == 0 {
        return Err(PyValueError::new_err(
            "a trace record holds at least one event",
        ));
    }
    // a part of `bytes` objects is held whole first: each event is then read as a slice
    let mut held: Vec<Bound<'py, PyBytes>> = Vec::new();
    let mut kept: Vec<Part<'_>> = Vec::with_capacity(parts.len());
    for part in &parts {
        if let Ok(encodings) = part.cast::<Encodings>() {
            kept.push(Part::Encoded(encodings.get()));
        } else if let Ok(noted) = part.cast::<KeptEvents>() {
            kept.push(Part::Kept(noted.get()));
        } else {
            let start = held.len();
            for event in part.try_iter()? {
                held.push(event?.cast_into::<PyBytes>()?);
            }
            kept.push(Part::Loose(start..held.len()));
        }
    }
    let mut events: Vec<Event<'_>> = Vec::with_capacity(held.len());
    let mut noted = 0;
    for part in &kept {
        match part {
            Part::Encoded(encodings) => events.extend(encodings.events().map(Event::Bytes)),
            Part::Kept(part) => {
                noted += part.len();
                events.extend((0..part.len()).map(|at| Event::Kept(part, at)))
            }
            Part::Loose(range) => events.extend(
                held[range.clone()]
                    .iter()
                    .map(|e| Event::Bytes(e.as_bytes())),
            ),
        }
    }
    let pack = || pack_records(&events, header, max_events, max_bytes);
    // the parts' data is immutable and held by `parts` meanwhile
    let records = if noted >= PACKED_WITHOUT_GIL {
        py.detach(pack)
    } else {
        pack()
    };
    let list = PyList::empty(py);
    for (record, count) in records {
        list.append((PyBytes::new(py, &record), count))?;
    }
    Ok(list)
}

/// `pack_events`' records of `events`, each with how many events it holds.
fn pack_records(
    events: &[Event<'_>],
    header: &[u8],
    max_events: usize,
    max_bytes: usize,
) -> Vec<(Vec<u8>, usize)> {
    let mut records = Vec::new();
    let mut start = 0;
    while start < events.len() {
        let mut end = start;
        let mut size = 0;
        while end < events.len() && end - start < max_events {
            let len = events[end].len();
            if end > start && size + len > max_bytes {
                break;
            }
            size += len;
            end += 1;
        }
        let chunk = &events[start..end];
        let mut record = Vec::with_capacity(header.len() + size + 4 * chunk.len() + 8);
        record.extend_from_slice(header);
        put_long(&mut record, chunk.len() as i64);
        for event in chunk {
            put_long(&mut record, event.len() as i64);
            event.write(&mut record);
        }
        record.push(0); // the array's end
        records.push((record, chunk.len()));
        start = end;
    }
    records
}

/// `rmqcompat.parking.MAX_PARK_LAG_MS` and `rmqcompat.forwarder.schedule.CLOCK_JUMP_MS`
/// (the parity tests run records at both bounds through this and the Python rules).
const MAX_PARK_LAG_MS: i128 = 1_000;
const CLOCK_JUMP_MS: i128 = 60_000;

/// A property as an integer the way `rmqcompat.properties.decode_int` reads it (an
/// optional sign, then ASCII digits), `Err(())` when it is not one. Beyond a Java long it
/// is held at +-2^100: every rule that reads it then decides as with the exact number.
fn int_of_property(
    properties: &Bound<'_, PyDict>,
    name: &Bound<'_, PyString>,
) -> Result<Option<i128>, ()> {
    let Ok(Some(value)) = properties.get_item(name) else {
        return Ok(None);
    };
    let Ok(text) = value.cast::<PyString>() else {
        return Err(());
    };
    let Ok(text) = text.to_str() else {
        return Err(());
    };
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(());
    }
    let beyond = if negative {
        -(1i128 << 100)
    } else {
        1i128 << 100
    };
    Ok(Some(text.parse::<i64>().map_or(beyond, i128::from)))
}

/// `len(value or b"")` of a record's value, key or header value.
fn len_or_zero(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().len());
    }
    if value.is_truthy()? {
        value.len()
    } else {
        Ok(0)
    }
}

/// A `(name, value)` header's name and value lengths.
fn header_size(item: &Bound<'_, PyAny>) -> PyResult<usize> {
    let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
    Ok(name.len()? + len_or_zero(&value)?)
}

/// RocketMQ properties as Kafka headers, `[(name, value encoded as UTF-8), ...]` in the
/// mapping's order: the counterpart of `rmqcompat.properties.encode_properties`. A value
/// that is not exactly a `str` is encoded by its own `encode("utf-8")`, as there.
#[pyfunction]
fn to_headers<'py>(
    py: Python<'py>,
    properties: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let headers = PyList::empty(py);
    if let Ok(dict) = properties.cast_exact::<PyDict>() {
        for (name, value) in dict.iter() {
            headers.append(PyTuple::new(py, [name, utf8(py, &value)?])?)?;
        }
        return Ok(headers);
    }
    for item in properties.call_method0(intern!(py, "items"))?.try_iter()? {
        let (name, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
        headers.append(PyTuple::new(py, [name, utf8(py, &value)?])?)?;
    }
    Ok(headers)
}

/// `value.encode("utf-8")`, without the method call for an exact `str`.
pub(crate) fn utf8<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    match value.cast_exact::<PyString>() {
        Ok(text) => Ok(PyBytes::new(py, text.to_str()?.as_bytes()).into_any()),
        Err(_) => value.call_method1(intern!(py, "encode"), ("utf-8",)),
    }
}

/// The bytes a held record takes that its sender chose: the counterpart of
/// `rmqcompat.forwarder.holding.record_size` for a consumed record and its headers
/// (`None`, or `(name, value)` pairs).
#[pyfunction]
fn record_size(msg: &Bound<'_, PyAny>, headers: &Bound<'_, PyAny>) -> PyResult<usize> {
    let mut size = len_or_zero(&record::call(msg, Accessor::VALUE)?)?
        + len_or_zero(&record::call(msg, Accessor::KEY)?)?;
    if headers.is_none() {
        return Ok(size);
    }
    if let Ok(list) = headers.cast::<PyList>() {
        for item in list.iter() {
            size += header_size(&item)?;
        }
        return Ok(size);
    }
    for item in headers.try_iter()? {
        size += header_size(&item?)?;
    }
    Ok(size)
}

/// What the forwarder's plan finds for a parked record in the common case (see
/// `plain_release`); `kept` is `None` while the record is not due. Python sees the tuple
/// `(due, properties, real_topic, real_qid, kept)`.
struct Release<'py> {
    due: i64,
    properties: Bound<'py, PyDict>,
    real_topic: Bound<'py, PyAny>,
    real_qid: i64,
    kept: Option<Bound<'py, PyList>>,
}

impl<'py> IntoPyObject<'py> for Release<'py> {
    type Target = PyTuple;
    type Output = Bound<'py, PyTuple>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let kept = match self.kept {
            Some(kept) => kept.into_any(),
            None => py.None().into_bound(py),
        };
        let fields = [
            self.due.into_pyobject(py)?.into_any(),
            self.properties.into_any(),
            self.real_topic,
            self.real_qid.into_pyobject(py)?.into_any(),
            kept,
        ];
        PyTuple::new(py, fields)
    }
}

/// The common case of the forwarder's plan of a parked record, or `None` for the rest:
/// the counterpart of `rmqcompat.forwarder.plan.plain_release` (see it for the case).
#[pyfunction]
fn plain_release<'py>(
    py: Python<'py>,
    headers: &Bound<'py, PyAny>,
    append_ms: Option<i64>,
    level_delay_ms: i64,
    now_ms: i64,
) -> PyResult<Option<Release<'py>>> {
    let Some(properties) = decode_headers(py, headers)? else {
        return Ok(None);
    };
    if properties.contains(intern!(py, "TIMER_DELIVER_MS"))? {
        return Ok(None);
    }
    let real_topic = properties.get_item(intern!(py, "REAL_TOPIC"))?;
    let Some(real_topic) = real_topic.filter(|t| t.is_truthy().unwrap_or(false)) else {
        return Ok(None);
    };
    let Ok(Some(stamped)) = int_of_property(&properties, intern!(py, "DUE_TIME")) else {
        return Ok(None);
    };
    let Ok(real_qid) = int_of_property(&properties, intern!(py, "REAL_QID")) else {
        return Ok(None);
    };
    let Ok(real_qid) = i64::try_from(real_qid.unwrap_or(-1)) else {
        return Ok(None); // -1: parking.ANY_QUEUE
    };
    if real_qid < -1 {
        return Ok(None);
    }
    let (delay, now) = (i128::from(level_delay_ms), i128::from(now_ms));
    let mut due = stamped;
    if let Some(append_ms) = append_ms {
        let latest = i128::from(append_ms) + delay;
        let lag = MAX_PARK_LAG_MS.min(delay.div_euclid(2));
        due = latest.min(due.max(latest - lag));
    }
    if due > now + delay + CLOCK_JUMP_MS {
        due = now;
    }
    let Ok(due) = i64::try_from(due) else {
        return Ok(None); // from a DUE_TIME or an append time at the end of a long
    };
    let kept = if due <= now_ms {
        let kept = PyList::empty(py);
        for pair in headers.cast::<PyList>()?.iter() {
            if pair.cast::<PyTuple>()?.get_item(0)?.cast::<PyString>()? != "DUE_TIME" {
                kept.append(pair)?;
            }
        }
        Some(kept)
    } else {
        None
    };
    Ok(Some(Release {
        due,
        properties,
        real_topic,
        real_qid,
        kept,
    }))
}

/// confluent-kafka's `TIMESTAMP_LOG_APPEND_TIME`: the broker stamped the record.
const TIMESTAMP_LOG_APPEND_TIME: i64 = 2;

/// `rmqcompat.forwarder.plan.record_append_ms`: the broker's append time of `record`.
fn record_append_ms(record: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    let stamp = record::call(record, Accessor::TIMESTAMP)?;
    let (kind, at): (i64, Bound<'_, PyAny>) = stamp.extract()?;
    if kind == TIMESTAMP_LOG_APPEND_TIME {
        Ok(Some(at.extract()?))
    } else {
        Ok(None)
    }
}

/// `rmqcompat.forwarder.schedule.lateness_s`: `max(0, now - due) / 1000` as Python
/// computes it (a float, correctly rounded).
fn lateness_s<'py>(py: Python<'py>, now: i64, due: i64) -> PyResult<Bound<'py, PyAny>> {
    let late = (i128::from(now) - i128::from(due)).max(0);
    if late < (1 << 53) {
        return Ok(PyFloat::new(py, late as f64 / 1000.0).into_any()); // exact: both are
    }
    late.into_pyobject(py)?.div(1000)
}

/// `rmqcompat.clock.epoch_ms`, the wall clock every rule takes by default.
static EPOCH_MS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// How a run reads a clock it was given: `rmqcompat.clock.epoch_ms` is read here, from the
/// same system clock and to the same millisecond, without a Python call per record (a
/// fifth of a microsecond each on the forwarder's thread); any other clock is called.
enum ClockReader<'a, 'py> {
    Wall,
    Call(&'a Bound<'py, PyAny>),
}

impl<'a, 'py> ClockReader<'a, 'py> {
    fn of(py: Python<'py>, clock: &'a Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(if is_wall_clock(py, clock)? {
            ClockReader::Wall
        } else {
            ClockReader::Call(clock)
        })
    }

    fn read(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            ClockReader::Wall => Ok(epoch_ms().into_pyobject(py)?.into_any()),
            ClockReader::Call(clock) => clock.call0(),
        }
    }
}

fn is_wall_clock(py: Python<'_>, clock: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(clock.is(EPOCH_MS.import(py, "rmqcompat.clock", "epoch_ms")?))
}

/// A clock an object keeps, read as a [`ClockReader`] reads one.
struct HeldClock {
    clock: Py<PyAny>,
    wall: bool,
}

impl HeldClock {
    fn new(py: Python<'_>, clock: Py<PyAny>) -> PyResult<Self> {
        let wall = is_wall_clock(py, clock.bind(py))?;
        Ok(HeldClock { clock, wall })
    }

    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if self.wall {
            ClockReader::Wall.read(py)
        } else {
            self.clock.bind(py).call0()
        }
    }
}

/// `time.time_ns() // 1_000_000`, as `rmqcompat.clock.epoch_ms` computes it.
fn epoch_ms() -> i128 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_nanos() as i128 / 1_000_000,
        Err(before) => (-(before.duration().as_nanos() as i128)).div_euclid(1_000_000),
    }
}

/// A run of held records forwarded in one call: the counterpart of
/// `rmqcompat.forwarder.run.forward_run` (see it for what it forwards and where it stops).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn forward_run<'py>(
    py: Python<'py>,
    held: &Bound<'py, PyAny>,
    accepted: &Bound<'py, PyDict>,
    level_delay_ms: i64,
    clock: &Bound<'py, PyAny>,
    recalled: &Bound<'py, PyAny>,
    start: &Bound<'py, PyAny>,
    produce: &Bound<'py, PyAny>,
    late: &Bound<'py, PyList>,
    traced: Option<&Bound<'py, PyList>>,
    trace_clock: &Bound<'py, PyAny>,
    limit: usize,
) -> PyResult<(usize, i64)> {
    let (mut count, mut size) = (0usize, 0i64);
    let any_recalled = recalled.is_truthy()?;
    let (clock, trace_clock) = (
        ClockReader::of(py, clock)?,
        ClockReader::of(py, trace_clock)?,
    );
    while count < limit && held.len()? > 0 {
        let entry = held.get_item(0)?;
        let entry = entry.cast::<PyTuple>()?;
        let (record, headers) = (entry.get_item(0)?, entry.get_item(1)?);
        let now: i64 = clock.read(py)?.extract()?;
        let append_ms = record_append_ms(&record)?;
        let Some(found) = plain_release(py, &headers, append_ms, level_delay_ms, now)? else {
            break;
        };
        let Some(kept) = found.kept else {
            break; // not due
        };
        let Some(topic) = accepted.get_item(&found.real_topic)? else {
            break; // a real topic the general path has not accepted yet
        };
        if any_recalled {
            let id = found.properties.get_item(intern!(py, "UNIQ_KEY"))?;
            if recalled.contains(id.unwrap_or_else(|| py.None().into_bound(py)))? {
                break;
            }
        }
        let mut value = record::call(&record, Accessor::VALUE)?;
        if !value.is_truthy()? {
            value = PyBytes::new(py, b"").into_any();
        }
        let key = record::call(&record, Accessor::KEY)?;
        let partition = found.real_qid; // -1 (parking.ANY_QUEUE): the key picks one
        let callback = start.call1((&record, &topic, &value, &key, &kept, partition))?;
        let args = (
            &topic,
            &value,
            &key,
            partition,
            callback,
            py.None(),
            0,
            &kept,
        );
        if let Err(err) = produce.call1(args) {
            if err.is_instance_of::<PyException>(py) {
                break; // nothing was queued: the general path sends it again
            }
            return Err(err);
        }
        late.append(lateness_s(py, now, found.due)?)?;
        if let Some(traced) = traced {
            let at = trace_clock.read(py)?;
            traced.append((at, &record, found.properties, found.due))?;
        }
        held.call_method0(intern!(py, "popleft"))?;
        count += 1;
        size += entry.get_item(2)?.extract::<i64>()?;
    }
    Ok((count, size))
}

/// Client-generated message ids: the counterpart of `rmqcompat.message_id.MessageIds`.
/// Each id is the 16 upper-case hex digits of `prefix`, then the seconds since the epoch
/// and a per-source counter, 4 bytes each, big-endian, in upper-case hex. The counter is
/// an atomic (no lock per id); the prefix changes only in `reset`, after a fork.
#[pyclass(frozen, module = "rmqcompat._core")]
struct MessageIds {
    prefix: Mutex<[u8; 16]>,
    counter: AtomicU32,
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// `prefix` as the 16 upper-case hex digits an id starts with, or the error naming it.
fn id_prefix(prefix: &str) -> PyResult<[u8; 16]> {
    let bytes = prefix.as_bytes();
    let valid = bytes.len() == 16 && bytes.iter().all(|b| HEX.contains(b));
    if !valid {
        return Err(PyValueError::new_err(format!(
            "a message id prefix is 16 upper-case hex digits, not {prefix:?}"
        )));
    }
    let mut out = [0u8; 16];
    out.copy_from_slice(bytes);
    Ok(out)
}

/// `start` as the counter's first value, or the error naming it.
fn id_start(start: i128) -> PyResult<u32> {
    u32::try_from(start).map_err(|_| {
        PyValueError::new_err(format!(
            "a message id counter starts in [0, 2**32), not {start}"
        ))
    })
}

fn epoch_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

impl MessageIds {
    fn text(prefix: &[u8; 16], seconds: u64, sequence: u32) -> String {
        let both = ((seconds & 0xFFFF_FFFF) << 32) | u64::from(sequence);
        let mut out = Vec::with_capacity(32);
        out.extend_from_slice(prefix);
        for shift in (0..16).rev() {
            out.push(HEX[((both >> (shift * 4)) & 0xF) as usize]);
        }
        // only ASCII hex digits went in
        String::from_utf8(out).unwrap_or_default()
    }

    fn current_prefix(&self) -> [u8; 16] {
        match self.prefix.lock() {
            Ok(prefix) => *prefix,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }
}

#[pymethods]
impl MessageIds {
    #[new]
    #[pyo3(signature = (prefix, start = 0))]
    fn new(prefix: &str, start: i128) -> PyResult<Self> {
        Ok(MessageIds {
            prefix: Mutex::new(id_prefix(prefix)?),
            counter: AtomicU32::new(id_start(start)?),
        })
    }

    /// A new id, stamped with the current second (thread-safe).
    fn next_id(&self) -> String {
        let sequence = self.counter.fetch_add(1, Ordering::Relaxed);
        Self::text(&self.current_prefix(), epoch_seconds(), sequence)
    }

    /// `count` new ids, of consecutive counter values and one clock reading.
    fn next_ids(&self, count: i128) -> PyResult<Vec<String>> {
        let Ok(count) = u32::try_from(count) else {
            let message = if count < 0 {
                format!("count must be >= 0, not {count}")
            } else {
                format!("count must be < 2**32, not {count}")
            };
            return Err(PyValueError::new_err(message));
        };
        let first = self.counter.fetch_add(count, Ordering::Relaxed);
        let (prefix, seconds) = (self.current_prefix(), epoch_seconds());
        Ok((0..count)
            .map(|i| Self::text(&prefix, seconds, first.wrapping_add(i)))
            .collect())
    }

    /// Start again with `prefix` and the counter at `start` (a forked child's own ids).
    #[pyo3(signature = (prefix, start = 0))]
    fn reset(&self, prefix: &str, start: i128) -> PyResult<()> {
        let (prefix, start) = (id_prefix(prefix)?, id_start(start)?);
        match self.prefix.lock() {
            Ok(mut current) => *current = prefix,
            Err(poisoned) => *poisoned.into_inner() = prefix,
        }
        self.counter.store(start, Ordering::Relaxed);
        Ok(())
    }
}

/// `module.name`, imported when first needed (a module of the pure-Python side).
fn python_attr<'py>(py: Python<'py>, module: &str, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import(module)?.getattr(name)
}

/// One send in flight and the future that reports its outcome: the counterpart of
/// `rmqcompat.producer.pending.PendingSend` (and of the `SendFuture` it is), with the same
/// constructor, attributes and methods. Unlike any Python object with attributes it is not
/// tracked by the cyclic garbage collector until it fails, so the sends in flight and the
/// futures a caller keeps, by the hundred thousand, are not walked at every collection.
/// A cycle through a send while it is in flight (a callback that holds its future, the
/// pipeline that holds the send) is broken when the send gets its outcome: the callbacks
/// are dropped then, the pipeline lets go of it, and a delivered send drops its record's
/// parts (`release`). A failed send is tracked again: its error's traceback may hold it.
///
/// State changes happen with the GIL held and no Python code running in between (values
/// a change lets go of are dropped after it), which is what the module lock gives the
/// Python class.
#[pyclass(module = "rmqcompat._core", name = "PendingSend")]
struct PendingSend {
    done: bool,
    sent: Option<Py<PyAny>>,
    delivery: Option<Py<PyAny>>,
    error: Option<Py<PyAny>>,
    on_outcome: Option<Py<PyAny>>,
    callbacks: Option<Vec<Py<PyAny>>>,
    wake: Option<Py<PyAny>>,
    #[pyo3(get, set)]
    topic: Py<PyAny>,
    #[pyo3(get, set)]
    value: Py<PyAny>,
    #[pyo3(get, set)]
    key: Py<PyAny>,
    #[pyo3(get, set)]
    headers: Py<PyAny>,
    #[pyo3(get, set)]
    partition: Py<PyAny>,
    #[pyo3(get, set)]
    msg_id: Py<PyAny>,
    #[pyo3(get, set)]
    logical_topic: Py<PyAny>,
    #[pyo3(get)]
    message: Py<PyAny>,
    /// This send left `message` out of the collector's sight (see `hide_message`).
    message_hidden: bool,
    #[pyo3(get, set)]
    max_attempts: Py<PyAny>,
    #[pyo3(get, set)]
    deadline: Py<PyAny>,
    #[pyo3(get, set)]
    spool_entry: Py<PyAny>,
    #[pyo3(get, set)]
    attempts: i64,
    #[pyo3(get, set)]
    stored_partition: Py<PyAny>,
    #[pyo3(get, set)]
    stored_offset: Py<PyAny>,
    #[pyo3(get, set)]
    producer: Py<PyAny>,
    #[pyo3(get, set)]
    on_report: Py<PyAny>,
}

impl Drop for PendingSend {
    fn drop(&mut self) {
        if self.message_hidden {
            Python::attach(|py| self.show_message(py));
        }
    }
}

/// The module of the pure-Python future: its helpers are the one place of what they do.
const SEND_FUTURE: &str = "rmqcompat.producer.send_future";

/// `rmqcompat.message.Message`, the class whose instances a send hides (`hide_message`).
static MESSAGE_CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

impl PendingSend {
    /// Leaves `message`, if it is exactly a `rmqcompat.message.Message` the collector sees,
    /// out of its sight while the send is in flight; `show_message` lets it see the message
    /// again. A burst of sends keeps the caller's messages alive by the hundred thousand
    /// until their delivery reports, and each full collection walked them all: 1.2-1.4 us
    /// a send at 100,000 in flight (`benchmarks/produce.py`, 2026-11-27). This changes no
    /// collection's outcome: the send holds the message, so the message and everything it
    /// leads to are reachable while it is hidden, and nothing else is hidden with it.
    fn hide_message(py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<bool> {
        let class = MESSAGE_CLASS.get_or_try_init(py, || {
            python_attr(py, "rmqcompat.message", "Message").map(Bound::unbind)
        })?;
        // SAFETY: with the GIL held; an instance of a Python class is a GC type
        if !message.get_type().is(class.bind(py))
            || unsafe { pyo3::ffi::PyObject_GC_IsTracked(message.as_ptr()) } == 0
        {
            return Ok(false);
        }
        untrack(message);
        Ok(true)
    }

    /// Lets the collector see the message again if this send hid it: before the send lets
    /// go of it, and once the send has its outcome (a failed send hands it to its error).
    fn show_message(&mut self, py: Python<'_>) {
        if std::mem::take(&mut self.message_hidden) {
            track(self.message.bind(py));
        }
    }

    /// Wait until the outcome is set, at most `timeout` seconds (None: for ever).
    fn wait(slf: &Bound<'_, Self>, timeout: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let py = slf.py();
        let existing = {
            let this = slf.borrow();
            if this.done {
                return Ok(());
            }
            this.wake.as_ref().map(|w| w.clone_ref(py))
        };
        let wake = match existing {
            Some(wake) => wake,
            None => {
                let made = python_attr(py, "threading", "Event")?.call0()?.unbind();
                let mut this = slf.borrow_mut();
                if this.done {
                    return Ok(());
                }
                // another waiter may have set one meanwhile: then `made` goes, after the borrow
                let wake = this.wake.get_or_insert_with(|| made.clone_ref(py));
                wake.clone_ref(py)
            }
        };
        let timeout = timeout.unwrap_or_else(|| py.None().into_bound(py));
        let woken = wake
            .bind(py)
            .call_method1(intern!(py, "wait"), (&timeout,))?;
        if !woken.is_truthy()? {
            return Err(pyo3::exceptions::PyTimeoutError::new_err(format!(
                "no outcome of the send within {} s",
                timeout.str()?
            )));
        }
        Ok(())
    }

    /// The outcome once set: the result, or the error raised. What it reads is copied
    /// out first: building the result runs Python code, during which another thread may
    /// change this send.
    fn outcome(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (error, sent, delivery, stored, attempts) = {
            let this = slf.borrow();
            let stored = [
                &this.msg_id,
                &this.logical_topic,
                &this.topic,
                &this.stored_partition,
                &this.stored_offset,
            ]
            .map(|part| part.clone_ref(py));
            let copy = |held: &Option<Py<PyAny>>| held.as_ref().map(|h| h.clone_ref(py));
            let (error, sent) = (copy(&this.error), copy(&this.sent));
            (error, sent, copy(&this.delivery), stored, this.attempts)
        };
        if let Some(error) = error {
            return Err(PyErr::from_value(error.into_bound(py)));
        }
        if let Some(sent) = sent {
            return Ok(sent);
        }
        let args = match delivery {
            Some(delivery) => delivery.into_bound(py).cast_into::<PyTuple>()?,
            None => {
                let mut fields = Vec::from(stored);
                fields.push(attempts.into_pyobject(py)?.into_any().unbind());
                PyTuple::new(py, fields)?
            }
        };
        let built = python_attr(py, SEND_FUTURE, "send_ok")?
            .call1(args)?
            .unbind();
        let mut this = slf.borrow_mut();
        let delivery = this.delivery.take();
        let sent = this.sent.get_or_insert(built).clone_ref(py);
        drop(this);
        drop(delivery);
        Ok(sent)
    }

    fn complete(
        slf: &Bound<'_, Self>,
        sent: Option<Py<PyAny>>,
        delivery: Option<Py<PyAny>>,
        error: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let py = slf.py();
        let (wake, callbacks, on_outcome, failed) = {
            let mut this = slf.borrow_mut();
            if this.done {
                drop(this);
                let refused = python_attr(py, "concurrent.futures", "InvalidStateError")?;
                let text = format!("{} already has its outcome", Self::describe(slf)?);
                return Err(PyErr::from_value(refused.call1((text,))?));
            }
            let failed = error.as_ref().map(|e| e.clone_ref(py));
            if failed.is_some() {
                // its error may lead back to it (a traceback whose frames hold it)
                track(slf.as_any());
            }
            (this.sent, this.delivery, this.error) = (sent, delivery, error);
            this.done = true;
            this.show_message(py);
            let wake = this.wake.as_ref().map(|w| w.clone_ref(py));
            (wake, this.callbacks.take(), this.on_outcome.take(), failed)
        };
        if let Some(wake) = wake {
            wake.bind(py).call_method0(intern!(py, "set"))?;
        }
        if on_outcome.is_none() && callbacks.is_none() {
            return Ok(());
        }
        let call = python_attr(py, SEND_FUTURE, "_call")?;
        if let Some(on_outcome) = on_outcome {
            let outcome = match failed {
                Some(error) => error,
                None => Self::outcome(slf)?,
            };
            call.call1((on_outcome, outcome))?;
        }
        for callback in callbacks.into_iter().flatten() {
            call.call1((callback, slf))?;
        }
        Ok(())
    }

    fn describe(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.borrow();
        let state = match (this.done, this.error.is_some()) {
            (false, _) => "running",
            (true, true) => "failed",
            (true, false) => "delivered",
        };
        Ok(format!(
            "<SendFuture {state} at {:#x}>",
            slf.as_ptr() as usize
        ))
    }
}

#[pymethods]
impl PendingSend {
    #[new]
    #[pyo3(signature = (topic, value, key, headers, msg_id, logical_topic, message, max_attempts,
                        deadline = None, on_outcome = None, partition = None, spool_entry = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        topic: Py<PyAny>,
        value: Py<PyAny>,
        key: Py<PyAny>,
        headers: Py<PyAny>,
        msg_id: Py<PyAny>,
        logical_topic: Py<PyAny>,
        message: Py<PyAny>,
        max_attempts: Py<PyAny>,
        deadline: Option<Py<PyAny>>,
        on_outcome: Option<Py<PyAny>>,
        partition: Option<Py<PyAny>>,
        spool_entry: Option<Py<PyAny>>,
    ) -> PyResult<Py<Self>> {
        let none = || py.None();
        let message_hidden = Self::hide_message(py, message.bind(py))?;
        let send = PendingSend {
            done: false,
            sent: None,
            delivery: None,
            error: None,
            on_outcome: on_outcome.filter(|f| !f.is_none(py)),
            callbacks: None,
            wake: None,
            topic,
            value,
            key,
            headers,
            partition: partition.unwrap_or_else(none),
            msg_id,
            logical_topic,
            message,
            message_hidden,
            max_attempts,
            deadline: deadline.unwrap_or_else(none),
            spool_entry: spool_entry.unwrap_or_else(none),
            attempts: 0,
            stored_partition: (-1i64).into_pyobject(py)?.into_any().unbind(),
            stored_offset: (-1i64).into_pyobject(py)?.into_any().unbind(),
            producer: py.None(),
            on_report: py.None(),
        };
        let send = Py::new(py, send)?;
        // see the class's comment on why the collector need not see it
        untrack(send.bind(py).as_any());
        Ok(send)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        Self::describe(slf)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for held in [
            &self.sent,
            &self.delivery,
            &self.error,
            &self.on_outcome,
            &self.wake,
        ] {
            visit.call(held)?;
        }
        for callback in self.callbacks.iter().flatten() {
            visit.call(callback)?;
        }
        let parts = [
            &self.topic,
            &self.value,
            &self.key,
            &self.headers,
            &self.partition,
            &self.msg_id,
            &self.logical_topic,
            &self.message,
            &self.max_attempts,
            &self.deadline,
            &self.stored_partition,
            &self.stored_offset,
            &self.spool_entry,
            &self.producer,
            &self.on_report,
        ];
        for part in parts {
            visit.call(part)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        (self.on_outcome, self.callbacks, self.error) = (None, None, None);
        Python::attach(|py| {
            self.show_message(py);
            self.message = py.None();
            self.on_report = py.None();
            self.producer = py.None();
        });
    }

    #[setter]
    fn set_message(slf: &Bound<'_, Self>, message: Py<PyAny>) {
        let mut this = slf.borrow_mut();
        this.show_message(slf.py());
        let replaced = std::mem::replace(&mut this.message, message);
        drop(this);
        drop(replaced);
    }

    fn done(&self) -> bool {
        self.done
    }

    fn running(&self) -> bool {
        !self.done
    }

    fn cancel(&self) -> bool {
        false
    }

    fn cancelled(&self) -> bool {
        false
    }

    #[pyo3(signature = (timeout = None))]
    fn result(slf: &Bound<'_, Self>, timeout: Option<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        Self::wait(slf, timeout)?;
        Self::outcome(slf)
    }

    #[pyo3(signature = (timeout = None))]
    fn exception(
        slf: &Bound<'_, Self>,
        timeout: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        Self::wait(slf, timeout)?;
        Ok(slf.borrow().error.as_ref().map(|e| e.clone_ref(slf.py())))
    }

    fn add_done_callback(slf: &Bound<'_, Self>, callback: Py<PyAny>) -> PyResult<()> {
        {
            let mut this = slf.borrow_mut();
            if !this.done {
                this.callbacks.get_or_insert_with(Vec::new).push(callback);
                return Ok(());
            }
        }
        python_attr(slf.py(), SEND_FUTURE, "_call")?.call1((callback, slf))?;
        Ok(())
    }

    fn as_future(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Ok(python_attr(slf.py(), SEND_FUTURE, "future_of")?
            .call1((slf,))?
            .unbind())
    }

    fn set_delivered(slf: &Bound<'_, Self>, delivery: Py<PyAny>) -> PyResult<()> {
        Self::complete(slf, None, Some(delivery), None)
    }

    fn set_result(slf: &Bound<'_, Self>, result: Py<PyAny>) -> PyResult<()> {
        Self::complete(slf, Some(result), None, None)
    }

    fn set_exception(slf: &Bound<'_, Self>, exception: Bound<'_, PyAny>) -> PyResult<()> {
        if !exception.is_instance_of::<pyo3::exceptions::PyBaseException>() {
            return Err(PyTypeError::new_err("set_exception needs an exception"));
        }
        Self::complete(slf, None, None, Some(exception.unbind()))
    }

    /// As the Python class: an offset librdkafka does not know (acks=0) is None here.
    fn set_stored(slf: &Bound<'_, Self>, partition: Py<PyAny>, offset: Py<PyAny>) -> PyResult<()> {
        let replaced = {
            let mut this = slf.borrow_mut();
            let partition = std::mem::replace(&mut this.stored_partition, partition);
            (
                partition,
                std::mem::replace(&mut this.stored_offset, offset),
            )
        };
        drop(replaced);
        Self::complete(slf, None, None, None)
    }

    fn record(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let record_of = python_attr(slf.py(), "rmqcompat.producer.pending", "record_of")?;
        Ok(record_of.call1((slf,))?.unbind())
    }

    fn release(slf: &Bound<'_, Self>) {
        let py = slf.py();
        let mut this = slf.borrow_mut();
        this.show_message(py);
        let released = [
            std::mem::replace(&mut this.value, py.None()),
            std::mem::replace(&mut this.headers, py.None()),
            std::mem::replace(&mut this.message, py.None()),
            std::mem::replace(&mut this.producer, py.None()),
            std::mem::replace(&mut this.on_report, py.None()),
        ];
        drop(this);
        drop(released);
    }

    #[pyo3(signature = (now = None))]
    fn remaining_s(
        slf: &Bound<'_, Self>,
        now: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let py = slf.py();
        let deadline = slf.borrow().deadline.clone_ref(py);
        if deadline.is_none(py) {
            return Ok(None);
        }
        let now = match now {
            Some(now) if !now.is_none() => now,
            _ => python_attr(py, "time", "monotonic")?.call0()?,
        };
        Ok(Some(deadline.bind(py).sub(now)?.unbind()))
    }

    fn start_attempt(
        slf: &Bound<'_, Self>,
        producer: Py<PyAny>,
        on_report: Py<PyAny>,
    ) -> PyResult<()> {
        let py = slf.py();
        let replaced = {
            let mut this = slf.borrow_mut();
            this.attempts += 1;
            (
                std::mem::replace(&mut this.producer, producer.clone_ref(py)),
                std::mem::replace(&mut this.on_report, on_report),
            )
        };
        drop(replaced);
        Self::produce_on(slf, producer.bind(py))
    }

    fn produce_on(slf: &Bound<'_, Self>, producer: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let args = {
            let this = slf.borrow();
            let partition = if this.partition.is_none(py) {
                (-1i64).into_pyobject(py)?.into_any().unbind()
            } else {
                this.partition.clone_ref(py)
            };
            // positional, as the Python class gives them (see it for why)
            (
                this.topic.clone_ref(py),
                this.value.clone_ref(py),
                this.key.clone_ref(py),
                partition,
                slf.clone().unbind(),
                py.None(),
                0i64,
                this.headers.clone_ref(py),
            )
        };
        producer.call_method1(intern!(py, "produce"), args)?;
        Ok(())
    }

    fn __call__(
        slf: &Bound<'_, Self>,
        err: &Bound<'_, PyAny>,
        msg: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = slf.py();
        let handler = slf.borrow().on_report.clone_ref(py).into_bound(py);
        if let Ok(reports) = handler.cast::<deliveries::DeliveryReports>() {
            return reports.get().report(slf.as_any(), err, msg); // without a Python call
        }
        if !handler.is_none() {
            handler.call1((slf, err, msg))?;
        }
        Ok(())
    }
}

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(decode_headers, module)?)?;
    module.add_function(wrap_pyfunction!(consume_calls, module)?)?;
    module.add_function(wrap_pyfunction!(pack_events, module)?)?;
    module.add_function(wrap_pyfunction!(forward_events, module)?)?;
    module.add_function(wrap_pyfunction!(send_back_events, module)?)?;
    module.add_function(wrap_pyfunction!(publish_events, module)?)?;
    module.add_function(wrap_pyfunction!(plain_headers, module)?)?;
    module.add_function(wrap_pyfunction!(replay_events, module)?)?;
    module.add_function(wrap_pyfunction!(plain_release, module)?)?;
    module.add_function(wrap_pyfunction!(forward_run, module)?)?;
    module.add_function(wrap_pyfunction!(plain_decode, module)?)?;
    module.add_function(wrap_pyfunction!(rdkafka::plugin_available, module)?)?;
    module.add_class::<direct_fetch::DirectFetch>()?;
    module.add_class::<Encodings>()?;
    module.add_class::<received::ConsumeEvents>()?;
    module.add_class::<received::KeptEvents>()?;
    // what a panic here raises, so threads that keep running after a bug catch it too
    module.add(
        "PanicException",
        module.py().get_type::<pyo3::panic::PanicException>(),
    )?;
    module.add_function(wrap_pyfunction!(received::kept_consume_event, module)?)?;
    module.add_class::<direct_produce::DirectProduce>()?;
    module.add_class::<replay::ReplayRecords>()?;
    module.add_class::<direct_fetch::DirectRecord>()?;
    module.add_function(wrap_pyfunction!(intake::accept_run, module)?)?;
    module.add_function(wrap_pyfunction!(bound_call::bound_call, module)?)?;
    module.add_class::<bound_call::BoundCall>()?;
    module.add_function(wrap_pyfunction!(record_size, module)?)?;
    module.add_function(wrap_pyfunction!(holding::hold_run, module)?)?;
    module.add_function(wrap_pyfunction!(to_headers, module)?)?;
    module.add_function(wrap_pyfunction!(send_back::send_back_headers, module)?)?;
    module.add_function(wrap_pyfunction!(replay::decode_letter_ids, module)?)?;
    module.add_function(wrap_pyfunction!(replay::replay_records, module)?)?;
    module.add_function(wrap_pyfunction!(replay::take_chunk, module)?)?;
    module.add_function(wrap_pyfunction!(ledger_page::compact_rows, module)?)?;
    module.add_function(wrap_pyfunction!(consume_batch::add_batches, module)?)?;
    module.add_function(wrap_pyfunction!(consume_batch::settle_successes, module)?)?;
    module.add_class::<consume_batch::BatchRunner>()?;
    module.add_class::<consume_batch::ConsumeBatch>()?;
    module.add_class::<consume_batch::ConsumeConcurrentlyContext>()?;
    module.add_class::<MessageIds>()?;
    module.add_class::<PendingSend>()?;
    module.add_class::<plain_lane::PlainLane>()?;
    module.add_class::<deliveries::DeliveryReports>()?;
    module.add_class::<process_queue::ProcessQueue>()?;
    Ok(())
}
