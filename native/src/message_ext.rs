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

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};

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

struct Layout {
    class: Py<PyType>,
    /// Where in an instance each field's slot lies, in `FIELDS` order.
    offsets: [ffi::Py_ssize_t; 10],
}

static LAYOUT: PyOnceLock<Layout> = PyOnceLock::new();

fn layout(py: Python<'_>) -> PyResult<&Layout> {
    LAYOUT.get_or_try_init(py, || {
        let class = py
            .import("rmqcompat.message")?
            .getattr("MessageExt")?
            .cast_into::<PyType>()?;
        let slots = member_slots(&class)?;
        let mut offsets = [0; 10];
        for (offset, descr) in offsets.iter_mut().zip(&slots) {
            // SAFETY: a member descriptor (checked by `member_slots`), which CPython lays out
            // as a `PyMemberDescrObject` pointing at its `PyMemberDef` in every version
            // (pyo3's declaration names another type before 3.11; the layout is the same).
            let member = unsafe {
                *(*descr.as_ptr().cast::<ffi::PyMemberDescrObject>())
                    .d_member
                    .cast::<ffi::PyMemberDef>()
            };
            if member.type_code != ffi::Py_T_OBJECT_EX {
                return Err(PyTypeError::new_err(
                    "a slot of rmqcompat.message.MessageExt is not an object slot",
                ));
            }
            *offset = member.offset;
        }
        Ok(Layout {
            offsets,
            class: class.unbind(),
        })
    })
}

/// The member descriptors of `FIELDS`, which must be the class's whole dataclass layout,
/// with nothing to run after the fields are set.
fn member_slots(class: &Bound<'_, PyType>) -> PyResult<Vec<Py<PyAny>>> {
    let refused = || {
        PyTypeError::new_err(format!(
            "the compiled core builds rmqcompat.message.MessageExt as a slotted dataclass of \
             the fields {FIELDS:?} without __post_init__; the class is laid out otherwise"
        ))
    };
    let py = class.py();
    let dataclasses = py.import("dataclasses")?;
    let names: Vec<String> = dataclasses
        .call_method1("fields", (class,))?
        .try_iter()?
        .map(|field| field?.getattr("name")?.extract())
        .collect::<PyResult<_>>()?;
    if names != FIELDS || class.hasattr("__post_init__")? {
        return Err(refused());
    }
    let own = class.getattr("__dict__")?;
    let member = py.import("types")?.getattr("MemberDescriptorType")?;
    let mut slots = Vec::with_capacity(FIELDS.len());
    for name in FIELDS {
        let descr = own.get_item(name).map_err(|_| refused())?;
        if !descr.get_type().is(&member) {
            return Err(refused());
        }
        slots.push(descr.unbind());
    }
    Ok(slots)
}

/// `getattr(msg, name)` of the field `field`: read from its slot when `msg` is exactly a
/// `MessageExt` and the slot is set (no attribute lookup), else by `getattr` (a subclass
/// may override the field; an empty slot raises `AttributeError` there).
pub fn field<'py>(msg: &Bound<'py, PyAny>, field: Field) -> PyResult<Bound<'py, PyAny>> {
    let py = msg.py();
    let layout = layout(py)?;
    let index = field as usize;
    if msg.get_type().is(layout.class.bind(py)) {
        // SAFETY: `msg` is an instance of the class whose layout puts this field's slot,
        // an object pointer (NULL when empty), at this offset; the instance keeps it alive.
        unsafe {
            let slot = *msg
                .as_ptr()
                .cast::<u8>()
                .offset(layout.offsets[index])
                .cast::<*mut ffi::PyObject>();
            if !slot.is_null() {
                return Ok(Bound::from_borrowed_ptr(py, slot));
            }
        }
    }
    msg.getattr(PyString::new(py, FIELDS[index]))
}

/// `MessageExt(*fields)`.
pub fn new_message_ext<'py>(
    py: Python<'py>,
    fields: [Bound<'py, PyAny>; 10],
) -> PyResult<Bound<'py, PyAny>> {
    let layout = layout(py)?;
    let class = layout.class.bind(py);
    // SAFETY: the class's own allocator makes an instance with every slot empty (NULL,
    // which its traversal and deallocation skip); each field's slot is an object pointer
    // at its offset (checked by `layout`), into which the new instance takes a new
    // reference, as the member descriptor's setter would store it (without its check that
    // the object is an instance of the class, which it is). A slotted class is a GC type,
    // so untracking its new, tracked instance is allowed.
    unsafe {
        let tp = class.as_type_ptr();
        let alloc = (*tp).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let obj = Bound::from_owned_ptr_or_err(py, alloc(tp, 0))?;
        let base = obj.as_ptr().cast::<u8>();
        for (offset, value) in layout.offsets.iter().zip(fields) {
            *base.offset(*offset).cast::<*mut ffi::PyObject>() = value.into_ptr();
        }
        crate::untrack(&obj);
        Ok(obj)
    }
}
