//! A function with its first arguments, called later with the rest, out of the cyclic
//! collector's sight: the counterpart of `rmqcompat.callbacks.bound_call` (see it for why).

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::untrack;

/// `func(*args, *more)` when called with `more`.
#[pyclass(module = "rmqcompat._core", name = "BoundCall", frozen)]
pub struct BoundCall {
    func: Py<PyAny>,
    args: Vec<Py<PyAny>>,
}

#[pymethods]
impl BoundCall {
    #[pyo3(signature = (*more))]
    fn __call__(&self, py: Python<'_>, more: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let mut args: Vec<Bound<'_, PyAny>> = Vec::with_capacity(self.args.len() + more.len());
        args.extend(self.args.iter().map(|arg| arg.bind(py).clone()));
        args.extend(more.iter());
        self.func.call1(py, PyTuple::new(py, args)?)
    }
}

/// `BoundCall` of `func` and `args`, which the collector does not track: it holds only
/// what it is handed, so it is in a cycle only if a caller puts it in one.
#[pyfunction]
#[pyo3(signature = (func, /, *args))]
pub fn bound_call<'py>(
    func: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, BoundCall>> {
    let call = Bound::new(
        func.py(),
        BoundCall {
            func: func.clone().unbind(),
            args: args.iter().map(Bound::unbind).collect(),
        },
    )?;
    untrack(call.as_any());
    Ok(call)
}
