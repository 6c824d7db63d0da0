//! The accessors of a consumed (or delivered) record, confluent-kafka's `Message`
//! (`record.value()`, `record.headers()`, ...), called without a method lookup.
//!
//! The core reads several accessors of every record it takes in (eight in the consumer's
//! intake), and a method call by name looks the method up on the type and calls it
//! through the generic protocol each time. confluent-kafka's accessors are C functions
//! without arguments (`METH_NOARGS`), so where a record's type is exactly confluent-kafka's
//! `Message`, the function is called directly, as CPython itself calls it: the consumer's
//! intake (`accept_run`) took 0.73-0.74 us a record this way against 0.88-0.94 by name
//! (10,627 records fetched from the dev broker, best of seven, three alternating pairs of
//! processes, 2026-11-28). The class and its methods are checked when first used; any
//! other record (a test's stand-in, a subclass that may override an accessor) or a
//! `Message` laid out otherwise is called by name, as before.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};

use crate::direct_fetch::DirectRecord;

/// An accessor of a record: its name, and its place among the functions `load` finds.
#[derive(Clone, Copy)]
pub struct Accessor {
    name: &'static str,
    at: usize,
}

impl Accessor {
    pub const ERROR: Self = Self::new("error", 0);
    pub const TOPIC: Self = Self::new("topic", 1);
    pub const PARTITION: Self = Self::new("partition", 2);
    pub const OFFSET: Self = Self::new("offset", 3);
    pub const KEY: Self = Self::new("key", 4);
    pub const VALUE: Self = Self::new("value", 5);
    pub const HEADERS: Self = Self::new("headers", 6);
    pub const TIMESTAMP: Self = Self::new("timestamp", 7);
    // crate::direct_fetch::DirectRecord::accessor reads these places

    const fn new(name: &'static str, at: usize) -> Self {
        Self { name, at }
    }
}

/// Every accessor, in the order of their places.
const ALL: [Accessor; 8] = [
    Accessor::ERROR,
    Accessor::TOPIC,
    Accessor::PARTITION,
    Accessor::OFFSET,
    Accessor::KEY,
    Accessor::VALUE,
    Accessor::HEADERS,
    Accessor::TIMESTAMP,
];

struct Accessors {
    class: Py<PyType>,
    /// Each accessor's C function, at its place.
    functions: [ffi::PyCFunction; 8],
}

// SAFETY: the function pointers are static functions of confluent-kafka's extension
// module, which is never unloaded; they are called only with the GIL held.
unsafe impl Send for Accessors {}
unsafe impl Sync for Accessors {}

static ACCESSORS: PyOnceLock<Option<Accessors>> = PyOnceLock::new();

fn accessors(py: Python<'_>) -> Option<&Accessors> {
    ACCESSORS
        .get_or_init(py, || load(py).ok().flatten())
        .as_ref()
}

/// confluent-kafka's `Message` and its accessors' functions, when each is a method
/// descriptor of a C function without arguments; `None` otherwise.
fn load(py: Python<'_>) -> PyResult<Option<Accessors>> {
    let class = py
        .import("confluent_kafka")?
        .getattr("Message")?
        .cast_into::<PyType>()?;
    let own = class.getattr("__dict__")?;
    let method_descriptor = py.import("types")?.getattr("MethodDescriptorType")?;
    let mut functions: Vec<ffi::PyCFunction> = Vec::with_capacity(ALL.len());
    for accessor in ALL {
        let descr = own.get_item(accessor.name)?;
        if !descr.get_type().is(&method_descriptor) {
            return Ok(None);
        }
        // SAFETY: an instance of `types.MethodDescriptorType` is a `PyMethodDescrObject`
        // whose `PyMethodDef` lives as long as its module; the class keeps the descriptor.
        let def = unsafe { &*(*descr.as_ptr().cast::<ffi::PyMethodDescrObject>()).d_method };
        if def.ml_flags != ffi::METH_NOARGS {
            return Ok(None);
        }
        // SAFETY: `METH_NOARGS` says the pointer is a `PyCFunction`.
        functions.push(unsafe { def.ml_meth.PyCFunction });
    }
    let Ok(functions) = <[ffi::PyCFunction; 8]>::try_from(functions) else {
        return Ok(None);
    };
    Ok(Some(Accessors {
        class: class.unbind(),
        functions,
    }))
}

/// `record.<accessor>()`.
pub fn call<'py>(record: &Bound<'py, PyAny>, accessor: Accessor) -> PyResult<Bound<'py, PyAny>> {
    let py = record.py();
    if let Ok(direct) = record.cast::<DirectRecord>() {
        return direct.get().accessor(py, accessor.at);
    }
    if let Some(found) = accessors(py) {
        // SAFETY: reading the type of a live object.
        if unsafe { ffi::Py_TYPE(record.as_ptr()) } == found.class.as_ptr().cast() {
            let function = found.functions[accessor.at];
            // SAFETY: the method's own function on an instance of exactly its class, with
            // no argument (NULL), as CPython calls a `METH_NOARGS` method; it returns a new
            // reference, or NULL with an exception set.
            return unsafe {
                Bound::from_owned_ptr_or_err(py, function(record.as_ptr(), std::ptr::null_mut()))
            };
        }
    }
    record.call_method0(PyString::intern(py, accessor.name))
}
