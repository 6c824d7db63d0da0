//! A dead-letter replay's per-letter work: the counterparts of
//! `rmqcompat.dlq.model.decode_ids`, `rmqcompat.dlq.chunk.take_chunk` and
//! `rmqcompat.dlq.chunk.replay_records`, which stay the reference
//! (`tests/unit/dlq/test_replay_core_parity.py` runs the same inputs through both).

use crate::slots::Slots;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};
use std::ffi::CStr;
use std::sync::Mutex;

/// `rmqcompat.dlq.model.LAYOUTS`, the header layouts seen so far.
static LAYOUTS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `rmqcompat.dlq.model.header_layout`, which makes and remembers a layout not seen yet.
static HEADER_LAYOUT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `rmqcompat.dlq.page.ledger_key`, for a key Rust cannot hold as text.
static LEDGER_KEY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `rmqcompat.dlq.republish.replay_headers`, for a dead letter outside the common case.
static REPLAY_HEADERS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `rmqcompat.dlq.republish.replaced_names`.
static REPLACED_NAMES: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `rmqcompat.dlq.republish.replay_topic`.
static REPLAY_TOPIC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `rmqcompat.errors.ConfigError`, which `replay_topic` raises for a letter it cannot place.
static CONFIG_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `rmqcompat.topics.naming.to_kafka_topic`.
static TO_KAFKA_TOPIC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The fields of `rmqcompat.dlq.model.DeadLetter` a replay reads and derives, in
/// [`Letter`] order.
static LETTER_FIELDS: [&str; 12] = [
    "group",
    "dlq_topic",
    "partition",
    "offset",
    "body",
    "key",
    "headers",
    "_dlq_id",
    "_layout",
    "_msg_id",
    "_origin_msg_id",
    "_original_topic",
];

/// A field of a dead letter, by its place in `LETTER_FIELDS`.
#[derive(Clone, Copy)]
enum Letter {
    Group,
    DlqTopic,
    Partition,
    Offset,
    Body,
    Key,
    Headers,
    DlqId,
    Layout,
    MsgId,
    OriginMsgId,
    OriginalTopic,
}

/// A dead letter's slots: a replay reads some ten fields of every letter and derives
/// five, some 20 ns each by name (slotted, frozen dataclass: derived fields are set as
/// `object.__setattr__` sets them).
struct LetterSlots(&'static Slots<12>);

static LETTER: PyOnceLock<Slots<12>> = PyOnceLock::new();

impl LetterSlots {
    fn get(py: Python<'_>) -> PyResult<Self> {
        let slots = LETTER.get_or_try_init(py, || {
            Slots::of_import(py, "rmqcompat.dlq.model", "DeadLetter", &LETTER_FIELDS)
        })?;
        Ok(LetterSlots(slots))
    }

    fn read<'py>(&self, letter: &Bound<'py, PyAny>, field: Letter) -> PyResult<Bound<'py, PyAny>> {
        self.0.read(letter, field as usize)
    }

    fn write(
        &self,
        letter: &Bound<'_, PyAny>,
        field: Letter,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.0.write(letter, field as usize, value)
    }
}

/// The fields of `rmqcompat.dlq.model.HeaderLayout` read for each dead letter.
static LAYOUT_FIELDS: [&str; 2] = ["names", "ids"];
const NAMES: usize = 0;
const IDS: usize = 1;
static HEADER_LAYOUT_SLOTS: PyOnceLock<Slots<2>> = PyOnceLock::new();

fn layout_slots(py: Python<'_>) -> PyResult<&'static Slots<2>> {
    HEADER_LAYOUT_SLOTS.get_or_try_init(py, || {
        Slots::of_import(py, "rmqcompat.dlq.model", "HeaderLayout", &LAYOUT_FIELDS)
    })
}

/// `rmqcompat.dlq.model._lenient`: a header value as text, undecodable bytes replaced
/// (by Python's own decoder), `None` empty.
fn lenient<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if value.is_none() {
        return Ok(PyString::new(py, "").into_any());
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        if let Ok(text) = std::str::from_utf8(bytes.as_bytes()) {
            return Ok(PyString::new(py, text).into_any());
        }
    }
    let value = if value.is_truthy()? {
        value.clone()
    } else {
        PyBytes::new(py, b"").into_any()
    };
    value.call_method1(intern!(py, "decode"), ("utf-8", "replace"))
}

/// `container[at]`, without an index object for a tuple (headers, their pairs and a
/// layout's indexes are tuples).
pub(crate) fn field<'py>(container: &Bound<'py, PyAny>, at: usize) -> PyResult<Bound<'py, PyAny>> {
    match container.cast::<PyTuple>() {
        Ok(tuple) if at < tuple.len() => tuple.get_item(at),
        _ => container.get_item(at),
    }
}

/// `container[index]`, as [`field`] where `index` is a non-negative int.
fn item<'py>(
    container: &Bound<'py, PyAny>,
    index: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    match index.extract::<usize>() {
        Ok(at) => field(container, at),
        Err(_) => container.get_item(index),
    }
}

/// One object remembered from call to call: what the dead letter decoded last had,
/// which the next one most often shares. Its lock is never held over a Python call,
/// which may let another thread run, nor while the object it lets go of is freed.
struct LastSeen<T>(Mutex<Option<Py<T>>>);

impl<T> LastSeen<T> {
    const fn new() -> Self {
        LastSeen(Mutex::new(None))
    }

    fn get<'py>(&self, py: Python<'py>) -> Option<Bound<'py, T>> {
        let last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        last.as_ref().map(|seen| seen.clone_ref(py).into_bound(py))
    }

    fn set(&self, seen: &Bound<'_, T>) {
        let seen = Some(seen.clone().unbind());
        let replaced =
            std::mem::replace(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()), seen);
        drop(replaced); // after the lock: letting go of it may free it
    }
}

/// The layout of the dead letter decoded last.
static LAST_LAYOUT: LastSeen<PyAny> = LastSeen::new();

/// Whether `headers`' names are `names` (a layout's), equal one by one: what finding
/// the layout in `LAYOUTS` by a tuple of them would compare, without the tuple or a
/// hash of each (the names of each dead letter are new objects). A comparison that
/// raises counts as a difference: the lookup then decides.
fn same_names(headers: &Bound<'_, PyAny>, names: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Ok(names) = names.cast::<PyTuple>() else {
        return Ok(false);
    };
    let mut count = 0;
    for header in headers.try_iter()? {
        let header = header?;
        if count >= names.len() {
            return Ok(false);
        }
        let (name, known) = (field(&header, 0)?, names.get_item(count)?);
        if !(known.is(&name) || known.eq(&name).unwrap_or(false)) {
            return Ok(false);
        }
        count += 1;
    }
    Ok(count == names.len())
}

/// `rmqcompat.dlq.model.header_layout(headers)`: the last letter's layout where its
/// names are the same, else the one `LAYOUTS` holds or makes.
fn layout_of<'py>(py: Python<'py>, headers: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Some(layout) = LAST_LAYOUT.get(py) {
        if same_names(headers, &layout_slots(py)?.read(&layout, NAMES)?)? {
            return Ok(layout);
        }
    }
    let mut names = Vec::new();
    for header in headers.try_iter()? {
        names.push(field(&header?, 0)?);
    }
    let names = PyTuple::new(py, names)?;
    let layouts = LAYOUTS.import(py, "rmqcompat.dlq.model", "LAYOUTS")?;
    let layout = match layouts.cast::<PyDict>()?.get_item(&names)? {
        Some(layout) => layout,
        None => HEADER_LAYOUT
            .import(py, "rmqcompat.dlq.model", "header_layout")?
            .call1((headers,))?,
    };
    LAST_LAYOUT.set(&layout);
    Ok(layout)
}

/// The original topic of the dead letter decoded last, as text.
static LAST_ORIGINAL: LastSeen<PyString> = LastSeen::new();

/// [`lenient`] of a dead letter's original topic: the text of the letter decoded before
/// where the bytes are the same. A group's dead letters mostly share their original
/// topic, and a replay keeps tens of thousands of them, each with a string of its own
/// otherwise.
fn original_text<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let (Some(last), Ok(bytes)) = (LAST_ORIGINAL.get(py), value.cast::<PyBytes>()) {
        if last.to_str().map(str::as_bytes).ok() == Some(bytes.as_bytes()) {
            return Ok(last.into_any());
        }
    }
    let text = lenient(py, value)?;
    if let Ok(kept) = text.cast::<PyString>() {
        LAST_ORIGINAL.set(kept);
    }
    Ok(text)
}

/// The layout, message ids and original topic of a dead letter, derived at once: the
/// counterpart of `rmqcompat.dlq.model.decode_ids` (see it).
#[pyfunction]
pub fn decode_letter_ids<'py>(
    py: Python<'py>,
    letter: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let slots = LetterSlots::get(py)?;
    let headers = slots.read(letter, Letter::Headers)?;
    let layout = layout_of(py, &headers)?;
    let ids = layout_slots(py)?.read(&layout, IDS)?;
    let value_at = |slot: usize| -> PyResult<Option<Bound<'py, PyAny>>> {
        let at = field(&ids, slot)?;
        if at.is_none() {
            Ok(None)
        } else {
            Ok(Some(field(&item(&headers, &at)?, 1)?))
        }
    };
    let empty = || PyString::new(py, "").into_any();
    let (msg_id, origin, original) = (value_at(0)?, value_at(1)?, value_at(2)?);
    let text_of_origin = match (&origin, &msg_id) {
        // the usual send-back: the same id twice, one text for both
        (Some(origin), Some(id)) if origin.is(id) || origin.eq(id)? => None,
        (Some(origin), _) => Some(lenient(py, origin)?),
        (None, _) => Some(empty()),
    };
    let mut msg_id = match msg_id {
        Some(value) => lenient(py, &value)?,
        None => empty(),
    };
    let original = match original {
        Some(value) => original_text(py, &value)?,
        None => empty(),
    };
    if !msg_id.is_truthy()? {
        msg_id = dlq_id(py, letter)?;
    }
    let origin = match text_of_origin {
        Some(text) if text.is_truthy()? => text,
        _ => msg_id.clone(),
    };
    slots.write(letter, Letter::MsgId, &msg_id)?;
    slots.write(letter, Letter::OriginMsgId, &origin)?;
    slots.write(letter, Letter::OriginalTopic, &original)?;
    slots.write(letter, Letter::Layout, &layout)?;
    Ok(layout)
}

/// Decodes `letter`'s ids unless it was before (what its properties do on first use):
/// its header layout.
fn decode_once<'py>(py: Python<'py>, letter: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let layout = LetterSlots::get(py)?.read(letter, Letter::Layout)?;
    if layout.is_none() {
        decode_letter_ids(py, letter)
    } else {
        Ok(layout)
    }
}

/// `str(value)`: an `int`'s digits without a Python string (a bool is not one);
/// `Err` inside for text with a lone surrogate.
fn decimal(value: &Bound<'_, PyAny>) -> PyResult<Result<String, ()>> {
    if value.is_exact_instance_of::<PyInt>() {
        if let Ok(number) = value.extract::<i64>() {
            return Ok(Ok(number.to_string()));
        }
    }
    let text = value.str()?;
    Ok(text.to_str().map(str::to_owned).map_err(|_| ()))
}

/// `letter.dlq_id`: `rmqcompat.wire.offset_message_id` of where the dead letter is
/// stored, derived and kept on first use as the property does.
fn dlq_id<'py>(py: Python<'py>, letter: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let slots = LetterSlots::get(py)?;
    let known = slots.read(letter, Letter::DlqId)?;
    if known.is_truthy()? {
        return Ok(known);
    }
    let topic = slots.read(letter, Letter::DlqTopic)?.str()?;
    let partition = decimal(&slots.read(letter, Letter::Partition)?)?;
    let offset = decimal(&slots.read(letter, Letter::Offset)?)?;
    let (Ok(topic), Ok(partition), Ok(offset)) = (topic.to_str(), partition, offset) else {
        return letter.getattr(intern!(py, "dlq_id")); // text with a lone surrogate: Python's
    };
    let id = PyString::new(py, &format!("{topic}@{partition}@{offset}")).into_any();
    slots.write(letter, Letter::DlqId, &id)?;
    Ok(id)
}

/// `rmqcompat.dlq.page.ledger_key(group, dlq_id, replay)`, or `None` for text that is not
/// UTF-8 (a lone surrogate), which the caller leaves to the Python rules.
fn ledger_key(
    group: &Bound<'_, PyAny>,
    dlq_id: &Bound<'_, PyAny>,
    replay: &Bound<'_, PyAny>,
) -> PyResult<Option<String>> {
    let (group, dlq_id) = (group.str()?, dlq_id.str()?);
    let (Ok(group), Ok(dlq_id)) = (group.to_str(), dlq_id.to_str()) else {
        return Ok(None);
    };
    if !replay.is_truthy()? {
        return Ok(Some(format!("{group}/{dlq_id}")));
    }
    let replay = replay.str()?;
    Ok(replay
        .to_str()
        .ok()
        .map(|replay| format!("{group}/{dlq_id}#{replay}")))
}

/// A header of a replayed record.
pub(crate) enum ReplayHeader {
    /// A `(name, value)` pair as it is: one of the dead letter's own, or of the stamp.
    Pair(Py<PyAny>),
    /// A header the replay adds: its name and its text's place in the records' `data`.
    Text(&'static CStr, (usize, usize)),
}

/// A replayed record's headers: built here (their place in the records' `headers`), or by
/// the Python rule (a list of pairs).
pub(crate) enum ReplayHeaders {
    Built(usize, usize),
    Python(Py<PyAny>),
}

/// One replayed record: its topic's index, its value and key objects, its headers.
pub(crate) struct ReplayRecord {
    pub topic: usize,
    pub value: Py<PyAny>,
    pub key: Py<PyAny>,
    pub headers: ReplayHeaders,
}

/// A chunk's replayed records as [`replay_records`] built them: a sequence of the
/// `(topic, value, key, headers)` tuples `rmqcompat.dlq.chunk.replay_records` returns
/// (built on demand), which `DirectProduce` hands to librdkafka without building them.
#[pyclass(module = "rmqcompat._core", name = "ReplayRecords", frozen, sequence)]
pub struct ReplayRecords {
    pub(crate) topics: Vec<Py<PyString>>,
    /// The headers built here, every record's in turn (one allocation for a chunk's).
    pub(crate) headers: Vec<ReplayHeader>,
    /// The text of every header the replay added.
    pub(crate) data: Vec<u8>,
    pub(crate) records: Vec<ReplayRecord>,
}

impl ReplayRecords {
    pub(crate) fn text(&self, span: (usize, usize)) -> &[u8] {
        &self.data[span.0..span.1]
    }

    /// The headers of a record whose headers were built here.
    pub(crate) fn built(&self, start: usize, end: usize) -> &[ReplayHeader] {
        &self.headers[start..end]
    }
}

#[pymethods]
impl ReplayRecords {
    fn __len__(&self) -> usize {
        self.records.len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, at: isize) -> PyResult<Bound<'py, PyTuple>> {
        let index = crate::sequence_index(at, self.records.len(), "replay record")?;
        let record = &self.records[index];
        let headers = match &record.headers {
            ReplayHeaders::Python(headers) => headers.bind(py).clone(),
            ReplayHeaders::Built(start, end) => {
                let list = PyList::empty(py);
                for header in self.built(*start, *end) {
                    match header {
                        ReplayHeader::Pair(pair) => list.append(pair.bind(py))?,
                        ReplayHeader::Text(name, span) => {
                            let name = PyString::intern(py, &name.to_string_lossy());
                            let value = PyBytes::new(py, self.text(*span));
                            list.append(PyTuple::new(py, [name.as_any(), value.as_any()])?)?
                        }
                    }
                }
                list.into_any()
            }
        };
        PyTuple::new(
            py,
            [
                self.topics[record.topic].bind(py).as_any(),
                record.value.bind(py),
                record.key.bind(py),
                &headers,
            ],
        )
    }
}

/// The headers of the usual replayed record: the three a send-back's dead letter keeps
/// (`ORIGIN_MESSAGE_ID`, `RETRY_TOPIC`, `BORN_TIMESTAMP`), the two a replay adds and the
/// two of its stamp. A chunk's headers are allocated for as many a record at once:
/// growing them step by step took 0.1 us a letter more (their memory moved, and faulted
/// in again).
const USUAL_HEADERS: usize = 7;

/// Appends `text` to `data`: its place there.
fn put(data: &mut Vec<u8>, text: &str) -> (usize, usize) {
    let start = data.len();
    data.extend_from_slice(text.as_bytes());
    (start, data.len())
}

/// What a replay keeps of the headers of one layout in the common case (every name is
/// text, `BORN_TIMESTAMP` among them): the indexes of the headers kept as they are, and
/// whether `ORIGIN_MESSAGE_ID` is among them; None outside it.
type Plan = Option<(Vec<usize>, bool)>;

fn plan<'py>(layout: &Bound<'py, PyAny>, replaced: &Bound<'py, PyAny>) -> PyResult<Plan> {
    let names = layout.getattr(intern!(layout.py(), "names"))?;
    let (mut keep, mut has_origin, mut has_born) = (Vec::new(), false, false);
    for (at, name) in names.try_iter()?.enumerate() {
        let name = name?;
        let Ok(text) = name.cast::<PyString>() else {
            return Ok(None);
        };
        has_origin |= text == "ORIGIN_MESSAGE_ID";
        has_born |= text == "BORN_TIMESTAMP";
        if !replaced.contains(&name)? {
            keep.push(at);
        }
    }
    Ok(has_born.then_some((keep, has_origin)))
}

/// The plans of the layouts seen in one call, by the layout's identity.
struct Plans<'py> {
    replaced: Bound<'py, PyAny>,
    known: Vec<(Bound<'py, PyAny>, Plan)>,
}

impl<'py> Plans<'py> {
    fn of(&mut self, layout: &Bound<'py, PyAny>) -> PyResult<&Plan> {
        let at = match self.known.iter().position(|(known, _)| known.is(layout)) {
            Some(at) => at,
            None => {
                let planned = plan(layout, &self.replaced)?;
                self.known.push((layout.clone(), planned));
                self.known.len() - 1
            }
        };
        Ok(&self.known[at].1)
    }
}

/// The headers of the record replaying `letter` in the common case (`plan` is its
/// layout's), added to `built`'s headers and texts, else `None`: the counterpart of
/// `rmqcompat.dlq.republish.replay_headers` there. Their place in `built.headers`.
fn plain_replay_headers<'py>(
    py: Python<'py>,
    letter: &Bound<'py, PyAny>,
    plan: &Plan,
    ids: (&Bound<'py, PyAny>, &Bound<'py, PyAny>, &str),
    stamp: &[Py<PyAny>],
    built: &mut ReplayRecords,
) -> PyResult<Option<(usize, usize)>> {
    let Some((keep, has_origin)) = plan else {
        return Ok(None);
    };
    let (msg_id, new_id, replay_id) = ids;
    let letter_headers = LetterSlots::get(py)?.read(letter, Letter::Headers)?;
    let (headers, data) = (&mut built.headers, &mut built.data);
    let start = headers.len();
    for &at in keep {
        headers.push(ReplayHeader::Pair(field(&letter_headers, at)?.unbind())); // the same pair
    }
    if !has_origin {
        let msg_id = msg_id.cast::<PyString>()?.to_str()?;
        headers.push(ReplayHeader::Text(c"ORIGIN_MESSAGE_ID", put(data, msg_id)));
    }
    let new_id = new_id.cast::<PyString>()?.to_str()?;
    headers.push(ReplayHeader::Text(c"UNIQ_KEY", put(data, new_id)));
    headers.push(ReplayHeader::Text(c"REPLAY_ID", put(data, replay_id)));
    headers.extend(
        stamp
            .iter()
            .map(|pair| ReplayHeader::Pair(pair.clone_ref(py))),
    );
    Ok(Some((start, headers.len())))
}

/// The replaying records and ledger rows of a chunk of dead letters: the counterpart of
/// `rmqcompat.dlq.chunk.replay_records` (see it), whose records come as [`ReplayRecords`].
#[pyfunction]
pub fn replay_records<'py>(
    py: Python<'py>,
    pending: &Bound<'py, PyAny>,
    new_ids: &Bound<'py, PyAny>,
    group: &Bound<'py, PyAny>,
    namespace: &Bound<'py, PyAny>,
    target: &Bound<'py, PyAny>,
    stamp: &Bound<'py, PyAny>,
) -> PyResult<(ReplayRecords, Bound<'py, PyList>)> {
    let replaced = REPLACED_NAMES
        .import(py, "rmqcompat.dlq.republish", "replaced_names")?
        .call1((target,))?;
    let mut plans = Plans {
        replaced,
        known: Vec::new(),
    };
    let to_kafka_topic = TO_KAFKA_TOPIC.import(py, "rmqcompat.topics.naming", "to_kafka_topic")?;
    let stamp_pairs: Vec<Py<PyAny>> = stamp
        .try_iter()?
        .map(|pair| pair.map(Bound::unbind))
        .collect::<PyResult<_>>()?;
    let slots = LetterSlots::get(py)?;
    let expected = pending.len().unwrap_or(0);
    let rows = PyList::empty(py);
    let mut built = ReplayRecords {
        topics: Vec::new(),
        headers: Vec::with_capacity(expected * USUAL_HEADERS),
        data: Vec::new(),
        records: Vec::with_capacity(expected),
    };
    let mut last: Option<(Bound<'py, PyAny>, usize)> = None; // (topic, its physical's index)
    let mut new_ids = new_ids.try_iter()?;
    let differ = || PyValueError::new_err("replay_records: pending and new_ids differ in length");
    for entry in pending.try_iter()? {
        let entry = entry?;
        let new_id = new_ids.next().ok_or_else(differ)??;
        let entry = entry
            .cast::<PyTuple>()
            .map_err(|_| PyTypeError::new_err("replay_records: a pending entry is not a tuple"))?;
        if entry.len() != 3 {
            return Err(PyValueError::new_err(
                "replay_records: a pending entry is not (letter, topic, replay)",
            ));
        }
        let [letter, topic, replay] = [entry.get_item(0)?, entry.get_item(1)?, entry.get_item(2)?];
        let id = dlq_id(py, &letter)?;
        let replay_id = ledger_key(group, &id, &replay)?;
        let layout = decode_once(py, &letter)?;
        let msg_id = slots.read(&letter, Letter::MsgId)?;
        let plain = match &replay_id {
            Some(key) => plain_replay_headers(
                py,
                &letter,
                plans.of(&layout)?,
                (&msg_id, &new_id, key),
                &stamp_pairs,
                &mut built,
            )?,
            None => None,
        };
        let headers = match plain {
            Some((start, end)) => ReplayHeaders::Built(start, end),
            None => {
                let key = match replay_id {
                    Some(key) => PyString::new(py, &key).into_any(),
                    None => LEDGER_KEY
                        .import(py, "rmqcompat.dlq.page", "ledger_key")?
                        .call1((group, &id, &replay))?,
                };
                let headers = REPLAY_HEADERS
                    .import(py, "rmqcompat.dlq.republish", "replay_headers")?
                    .call1((&letter, target, &new_id, key, stamp))?;
                ReplayHeaders::Python(headers.unbind())
            }
        };
        let physical = match &last {
            Some((known, at)) if known.is(&topic) || known.eq(&topic)? => *at,
            _ => {
                let physical = to_kafka_topic.call1((&topic, namespace))?;
                let physical = physical.cast_into::<PyString>().map_err(|_| {
                    PyTypeError::new_err("replay_records: a Kafka topic name is not str")
                })?;
                built.topics.push(physical.unbind());
                let at = built.topics.len() - 1;
                last = Some((topic.clone(), at));
                at
            }
        };
        built.records.push(ReplayRecord {
            topic: physical,
            value: slots.read(&letter, Letter::Body)?.unbind(),
            key: slots.read(&letter, Letter::Key)?.unbind(),
            headers,
        });
        let row = [
            id,
            msg_id,
            slots.read(&letter, Letter::OriginMsgId)?,
            slots.read(&letter, Letter::OriginalTopic)?,
            topic,
            new_id,
            replay,
        ];
        rows.append(PyTuple::new(py, row)?)?;
    }
    if new_ids.next().is_some() {
        return Err(differ()); // as zip(strict=True): once every pending entry was built
    }
    Ok((built, rows))
}

/// `tally.<name> += 1`.
fn count_one(tally: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> PyResult<()> {
    tally.setattr(name, tally.getattr(name)?.add(1)?)
}

/// The next transaction's dead letters: the counterpart of
/// `rmqcompat.dlq.chunk.take_chunk` (see it).
#[pyfunction]
pub fn take_chunk<'py>(
    py: Python<'py>,
    letters: &Bound<'py, PyAny>,
    counts: &Bound<'py, PyAny>,
    force: bool,
    target: &Bound<'py, PyAny>,
    limits: (usize, i128),
    destinations: &Bound<'py, PyDict>,
    tally: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let (most, max_bytes) = limits;
    let slots = LetterSlots::get(py)?;
    let counted = counts.is_truthy()?;
    let zero = 0i32.into_pyobject(py)?.into_any();
    let chunk = PyList::empty(py);
    let mut size: i128 = 0;
    let mut last: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> = None;
    for letter in letters.try_iter()? {
        let letter = letter?;
        let done = if counted {
            let id = dlq_id(py, &letter)?;
            counts.call_method1(intern!(py, "get"), (id, &zero))?
        } else {
            zero.clone()
        };
        if !force && done.is_truthy()? {
            count_one(tally, intern!(py, "skipped"))?;
            continue;
        }
        decode_once(py, &letter)?;
        let group = slots.read(&letter, Letter::Group)?;
        let original = slots.read(&letter, Letter::OriginalTopic)?;
        // the destination of the letter before, when it came from the same place (most
        // do): what `destinations` would answer, without a key tuple and its hash
        let known = match &last {
            Some((g, o, topic)) if g.eq(&group)? && o.eq(&original)? => Some(topic.clone()),
            _ => None,
        };
        let topic = match known {
            Some(topic) => topic,
            None => {
                let origin = PyTuple::new(py, [&group, &original])?;
                match destinations.get_item(&origin)? {
                    Some(topic) => topic,
                    None => {
                        let place =
                            REPLAY_TOPIC.import(py, "rmqcompat.dlq.republish", "replay_topic")?;
                        match place.call1((&letter, target)) {
                            Ok(topic) => {
                                destinations.set_item(&origin, &topic)?;
                                topic
                            }
                            Err(err) => {
                                let refused =
                                    CONFIG_ERROR.import(py, "rmqcompat.errors", "ConfigError")?;
                                if !err.matches(py, refused)? {
                                    return Err(err);
                                }
                                count_one(tally, intern!(py, "failed"))?;
                                let problems = tally.getattr(intern!(py, "problems"))?;
                                let text = err.value(py).str()?;
                                problems.call_method1(intern!(py, "append"), (text,))?;
                                continue;
                            }
                        }
                    }
                }
            }
        };
        last = Some((group, original, topic.clone()));
        size += slots.read(&letter, Letter::Body)?.len()? as i128;
        chunk.append(PyTuple::new(py, [letter, topic, done])?)?;
        if chunk.len() >= most || size >= max_bytes {
            break;
        }
    }
    Ok(chunk)
}
