//! rmqcompat's compiled core: per-message work of the hot paths, each function the exact
//! counterpart of a pure-Python function that stays the reference (`rmqcompat/core.py`
//! says which one is active; tests run the same inputs through both).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

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
    let properties = PyDict::new(py);
    for item in headers.iter() {
        let Ok(pair) = item.cast::<PyTuple>() else {
            return Ok(None);
        };
        if pair.len() != 2 {
            return Ok(None);
        }
        let name = pair.get_item(0)?;
        if !name.is_instance_of::<PyString>() {
            return Ok(None);
        }
        let value = pair.get_item(1)?;
        let Ok(bytes) = value.cast::<PyBytes>() else {
            return Ok(None);
        };
        let Ok(text) = std::str::from_utf8(bytes.as_bytes()) else {
            return Ok(None);
        };
        if properties.contains(&name)? {
            return Ok(None);
        }
        properties.set_item(name, PyString::new(py, text))?;
    }
    Ok(Some(properties))
}

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(decode_headers, module)?)?;
    Ok(())
}
