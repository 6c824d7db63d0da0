//! Instances of slotted Python classes read and written at their slots' offsets: what the
//! classes' member descriptors do, without looking each attribute up by name on every
//! access (a `getattr` from Rust costs some 20 ns, a slot read a load).
//!
//! A [`Slots`] is made once per class from the member descriptors in the class's own
//! `__dict__`, each checked to be an object slot; it is used only on instances whose type
//! is exactly that class (a subclass may override an attribute), which callers check with
//! [`Slots::holds`]; [`Slots::read`] and [`Slots::write`] fall back on the attribute's
//! name for other objects.

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

/// Where the object slots named at its making lie in instances of one class.
pub struct Slots<const N: usize> {
    class: Py<PyType>,
    names: &'static [&'static str; N],
    /// Each slot's offset in an instance, in the order of the names.
    offsets: [ffi::Py_ssize_t; N],
}

impl<const N: usize> Slots<N> {
    /// The slots `names` of `class`, each a member descriptor of `class` itself holding
    /// an object; a `TypeError` naming the class otherwise.
    pub fn of(class: &Bound<'_, PyType>, names: &'static [&'static str; N]) -> PyResult<Self> {
        let py = class.py();
        let refused = |name: &str| -> PyResult<PyErr> {
            Ok(PyTypeError::new_err(format!(
                "the compiled core reads {}.{name} as an object slot of its own; the class is \
                 laid out otherwise",
                class.fully_qualified_name()?
            )))
        };
        let own = class.getattr("__dict__")?;
        let member = py.import("types")?.getattr("MemberDescriptorType")?;
        let mut offsets = [0; N];
        for (offset, name) in offsets.iter_mut().zip(names) {
            let Ok(descr) = own.get_item(name) else {
                return Err(refused(name)?);
            };
            if !descr.get_type().is(&member) {
                return Err(refused(name)?);
            }
            // SAFETY: a member descriptor (its type checked above), which CPython lays out
            // as a `PyMemberDescrObject` pointing at its `PyMemberDef` in every version
            // (pyo3's declaration names another type before 3.11; the layout is the same);
            // the class keeps it alive.
            let def = unsafe {
                *(*descr.as_ptr().cast::<ffi::PyMemberDescrObject>())
                    .d_member
                    .cast::<ffi::PyMemberDef>()
            };
            if def.type_code != ffi::Py_T_OBJECT_EX {
                return Err(refused(name)?);
            }
            *offset = def.offset;
        }
        Ok(Slots {
            class: class.clone().unbind(),
            names,
            offsets,
        })
    }

    /// [`Slots::of`] the class `module.name`.
    pub fn of_import(
        py: Python<'_>,
        module: &str,
        name: &str,
        names: &'static [&'static str; N],
    ) -> PyResult<Self> {
        let class = py.import(module)?.getattr(name)?.cast_into::<PyType>()?;
        Slots::of(&class, names)
    }

    /// Whether `obj`'s type is exactly the class, whose slots these are.
    pub fn holds(&self, obj: &Bound<'_, PyAny>) -> bool {
        // SAFETY: a live object's type, compared by address only
        unsafe { ffi::Py_TYPE(obj.as_ptr()) == self.class.as_ptr().cast() }
    }

    /// The address of slot `at` of `obj`, an instance of exactly the class.
    ///
    /// # Safety
    /// `obj`'s type must be the class (see [`Slots::holds`]).
    unsafe fn slot(&self, obj: &Bound<'_, PyAny>, at: usize) -> *mut *mut ffi::PyObject {
        obj.as_ptr()
            .cast::<u8>()
            .offset(self.offsets[at])
            .cast::<*mut ffi::PyObject>()
    }

    /// Slot `at` of `obj`: `None` when `obj` is not exactly an instance of the class or the
    /// slot is empty (the attribute then raises `AttributeError`).
    pub fn get<'py>(&self, obj: &Bound<'py, PyAny>, at: usize) -> Option<Bound<'py, PyAny>> {
        if !self.holds(obj) {
            return None;
        }
        // SAFETY: `obj` is an instance of the class, whose slot `at` is an object pointer
        // (NULL when empty) at this offset; `obj` keeps what it points to alive.
        unsafe {
            let value = *self.slot(obj, at);
            (!value.is_null()).then(|| Bound::from_borrowed_ptr(obj.py(), value))
        }
    }

    /// Every slot of `obj` at once (one check of its type for all of them): `None` when
    /// `obj` is not exactly an instance of the class or a slot is empty.
    pub fn get_all<'py>(&self, obj: &Bound<'py, PyAny>) -> Option<[Bound<'py, PyAny>; N]> {
        if !self.holds(obj) {
            return None;
        }
        let mut values = [std::ptr::null_mut(); N];
        for (at, value) in values.iter_mut().enumerate() {
            // SAFETY: as in `get`
            *value = unsafe { *self.slot(obj, at) };
            if value.is_null() {
                return None;
            }
        }
        // SAFETY: each a live object `obj` holds
        Some(values.map(|value| unsafe { Bound::from_borrowed_ptr(obj.py(), value) }))
    }

    /// Sets slot `at` of `obj` to `value`, as the member descriptor's setter does (a frozen
    /// dataclass's too, as `object.__setattr__`); false, with nothing set, when `obj` is not
    /// exactly an instance of the class.
    pub fn set(&self, obj: &Bound<'_, PyAny>, at: usize, value: &Bound<'_, PyAny>) -> bool {
        if !self.holds(obj) {
            return false;
        }
        // SAFETY: as in `get`; the slot takes a new reference and lets go of the one it
        // held (after the store: freeing the old value may run code that reads the slot).
        unsafe {
            let slot = self.slot(obj, at);
            let old = std::mem::replace(&mut *slot, value.clone().into_ptr());
            ffi::Py_XDECREF(old);
        }
        true
    }

    /// `getattr(obj, name)` of slot `at`: read from the slot where [`Slots::get`] can, else
    /// by name.
    pub fn read<'py>(&self, obj: &Bound<'py, PyAny>, at: usize) -> PyResult<Bound<'py, PyAny>> {
        match self.get(obj, at) {
            Some(value) => Ok(value),
            None => obj.getattr(PyString::intern(obj.py(), self.names[at])),
        }
    }

    /// `object.__setattr__(obj, name, value)` of slot `at`: written to the slot where
    /// [`Slots::set`] can, else by name (bypassing a frozen dataclass's `__setattr__`).
    pub fn write(
        &self,
        obj: &Bound<'_, PyAny>,
        at: usize,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if self.set(obj, at, value) {
            return Ok(());
        }
        let name = PyString::intern(obj.py(), self.names[at]);
        // SAFETY: three valid object pointers, borrowed for the call; the GIL is held.
        let status =
            unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
        if status == 0 {
            Ok(())
        } else {
            Err(PyErr::fetch(obj.py()))
        }
    }

    /// A new instance of the class with slot `i` holding `values[i]`, built without its
    /// `__init__`: the class's own allocator makes it with every slot empty, and each
    /// slot takes its value. The caller vouches that the class has no other state to set.
    pub fn new_filled<'py>(
        &self,
        py: Python<'py>,
        values: [Bound<'py, PyAny>; N],
    ) -> PyResult<Bound<'py, PyAny>> {
        let class = self.class.bind(py);
        // SAFETY: the allocator makes an instance with every slot empty (NULL, which its
        // traversal and deallocation skip); each slot then takes a new reference, as the
        // member descriptor's setter would store it.
        unsafe {
            let tp = class.as_type_ptr();
            let alloc = (*tp).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
            let obj = Bound::from_owned_ptr_or_err(py, alloc(tp, 0))?;
            for (at, value) in values.into_iter().enumerate() {
                *self.slot(&obj, at) = value.into_ptr();
            }
            Ok(obj)
        }
    }
}
