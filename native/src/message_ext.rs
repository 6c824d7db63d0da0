//! `rmqcompat.message.MessageExt` instances built without a Python frame: the class is a
//! slotted dataclass, so an instance is its type's allocation with each field's slot
//! holding its value, exactly what the generated `__init__` does with its ten positional
//! arguments through the member descriptors, without its frame (the slots are written at
//! the offsets those descriptors give). The layout is checked when first used: a class
//! laid out otherwise (no slots, other fields, a `__post_init__`) is refused with a
//! `TypeError`, which the parity tests would show at once.
//!
//! An instance is left out of the cyclic collector's sight, as CPython leaves tuples and
//! dicts that hold nothing it needs to see: its fields are text, bytes, numbers and a dict
//! of text properties, none of which can lead back to it, and it is built for every message
//! consumed, so the collector would otherwise count and scan one more object for each
//! message in flight. (A listener that stores a message inside its own properties makes a
//! cycle that lives as long as the process; properties are text.)

use crate::slots::Slots;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The dataclass's fields, in its order: the order of `MessageExt(...)`'s positional
/// arguments (pinned by `tests/unit/test_wire.py`).
const FIELDS: [&str; 10] = [
    "topic",
    "body",
    "msg_id",
    "queue_id",
    "queue_offset",
    "born_timestamp",
    "store_timestamp",
    "reconsume_times",
    "properties",
    "key",
];

/// A field of the dataclass, by its place in `FIELDS`.
#[derive(Clone, Copy)]
pub enum Field {
    Topic = 0,
    Body = 1,
    MsgId = 2,
    QueueId = 3,
    QueueOffset = 4,
    BornTimestamp = 5,
    ReconsumeTimes = 7,
    Properties = 8,
}

/// The class and its slots, in `FIELDS` order.
static LAYOUT: PyOnceLock<Slots<10>> = PyOnceLock::new();

fn layout(py: Python<'_>) -> PyResult<&Slots<10>> {
    LAYOUT.get_or_try_init(py, || {
        let class = py
            .import("rmqcompat.message")?
            .getattr("MessageExt")?
            .cast_into::<PyType>()?;
        check_fields(&class)?;
        Slots::of(&class, &FIELDS)
    })
}

/// `FIELDS` must be the class's whole dataclass layout, with nothing to run after the
/// fields are set.
fn check_fields(class: &Bound<'_, PyType>) -> PyResult<()> {
    let dataclasses = class.py().import("dataclasses")?;
    let names: Vec<String> = dataclasses
        .call_method1("fields", (class,))?
        .try_iter()?
        .map(|field| field?.getattr("name")?.extract())
        .collect::<PyResult<_>>()?;
    if names != FIELDS || class.hasattr("__post_init__")? {
        return Err(PyTypeError::new_err(format!(
            "the compiled core builds rmqcompat.message.MessageExt as a slotted dataclass of \
             the fields {FIELDS:?} without __post_init__; the class is laid out otherwise"
        )));
    }
    Ok(())
}

/// `getattr(msg, name)` of the field `field`: read from its slot when `msg` is exactly a
/// `MessageExt` and the slot is set (no attribute lookup), else by `getattr` (a subclass
/// may override the field; an empty slot raises `AttributeError` there).
pub fn field<'py>(msg: &Bound<'py, PyAny>, field: Field) -> PyResult<Bound<'py, PyAny>> {
    layout(msg.py())?.read(msg, field as usize)
}

/// A message's fields as [`field`] reads them: from its slots all at once where it is
/// exactly a `MessageExt` with every slot set (one check for all of them), else each by
/// [`field`] when asked for (in the order the caller asks, as the pure path reads them).
pub struct Fields<'a, 'py> {
    msg: &'a Bound<'py, PyAny>,
    slots: Option<[Bound<'py, PyAny>; 10]>,
}

impl<'a, 'py> Fields<'a, 'py> {
    pub fn of(msg: &'a Bound<'py, PyAny>) -> PyResult<Self> {
        let slots = layout(msg.py())?.get_all(msg);
        Ok(Fields { msg, slots })
    }

    pub fn get(&self, which: Field) -> PyResult<Bound<'py, PyAny>> {
        match &self.slots {
            Some(slots) => Ok(slots[which as usize].clone()),
            None => field(self.msg, which),
        }
    }
}

/// `MessageExt(*fields)`.
pub fn new_message_ext<'py>(
    py: Python<'py>,
    fields: [Bound<'py, PyAny>; 10],
) -> PyResult<Bound<'py, PyAny>> {
    // the class's whole state is its fields (checked by `layout`)
    let obj = layout(py)?.new_filled(py, fields)?;
    // a slotted class is a GC type, so untracking its new, tracked instance is allowed
    crate::untrack(&obj);
    Ok(obj)
}
