//! A ledger page's lines: the counterpart of `rmqcompat.dlq.page.compact_rows`, which
//! stays the reference (`tests/unit/dlq/test_replay_core_parity.py` runs the same inputs
//! through both). Rows outside the common case (a list or tuple of 7-tuples of `str`
//! fields and an `int` replay number that fits 64 bits, every text UTF-8) are left to it.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyInt, PyList, PyString, PyTuple};

/// `rmqcompat.dlq.page.compact_rows`.
static COMPACT_ROWS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// An exact `str`'s UTF-8 text, or None.
fn text<'a>(value: &'a Bound<'_, PyAny>) -> Option<&'a str> {
    if !value.is_exact_instance_of::<PyString>() {
        return None;
    }
    value.cast::<PyString>().ok()?.to_str().ok()
}

/// Appends `field` after a tab (none before a line's first): false where it holds a
/// separator of the format.
fn add(out: &mut String, field: &str, first: bool) -> bool {
    if !first {
        out.push('\t');
    }
    out.push_str(field);
    !field.contains(['\t', '\n'])
}

/// The body of the page of `rows`: `Some(None)` where a written field holds a tab or a
/// line feed, None outside the common case.
fn body(rows: &[Bound<'_, PyAny>]) -> Option<Option<String>> {
    let mut out = String::with_capacity(rows.len() * 96);
    let mut above: Option<(String, String)> = None; // the topics of the row above
    for (at, row) in rows.iter().enumerate() {
        let row = row.cast::<PyTuple>().ok()?;
        if row.len() != 7 {
            return None;
        }
        let items = [0, 1, 2, 3, 4, 5, 6].map(|at| row.get_borrowed_item(at).ok());
        let mut texts = [""; 6];
        for (slot, item) in texts.iter_mut().zip(&items) {
            *slot = text(item.as_ref()?)?;
        }
        let replay = items[6].as_ref()?;
        if !replay.is_exact_instance_of::<PyInt>() {
            return None;
        }
        let digits = replay.extract::<i64>().ok()?.to_string();
        let [dlq_id, msg_id, origin, original, replayed_to, new_id] = texts;
        if at > 0 {
            out.push('\n');
        }
        let mut clean = add(&mut out, dlq_id, true);
        clean &= add(&mut out, msg_id, false);
        clean &= add(&mut out, new_id, false);
        clean &= add(&mut out, &digits, false);
        let continuing = matches!(&above, Some((o, r)) if o == original && r == replayed_to);
        if !continuing {
            clean &= add(&mut out, origin, false);
            clean &= add(&mut out, original, false);
            clean &= add(&mut out, replayed_to, false);
            above = Some((original.to_owned(), replayed_to.to_owned()));
        } else if origin != msg_id {
            clean &= add(&mut out, origin, false);
        }
        if !clean {
            return Some(None);
        }
    }
    Some(Some(out))
}

/// The body of a format 2 page of `replays`, or None: the counterpart of
/// `rmqcompat.dlq.page.compact_rows` (see it).
#[pyfunction]
pub fn compact_rows<'py>(
    py: Python<'py>,
    replays: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let rows: Option<Vec<Bound<'py, PyAny>>> = if let Ok(list) = replays.cast::<PyList>() {
        Some(list.iter().collect())
    } else if let Ok(tuple) = replays.cast::<PyTuple>() {
        Some(tuple.iter().collect())
    } else {
        None
    };
    match rows.as_deref().and_then(body) {
        Some(Some(text)) => Ok(PyString::new(py, &text).into_any()),
        Some(None) => Ok(py.None().into_bound(py)),
        None => COMPACT_ROWS
            .import(py, "rmqcompat.dlq.page", "compact_rows")?
            .call1((replays,)),
    }
}
