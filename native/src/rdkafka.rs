//! librdkafka as the process loaded it (the library confluent-kafka ships), and this
//! library as a librdkafka plugin (`plugin.library.paths`): its `conf_init` adds
//! interceptors that accept the property [`TOKEN_PROPERTY`] and, when the client is
//! created (`on_new`), note its handle under that token, until the client is destroyed
//! ([`client_of`]). The direct fetch (`direct_fetch`) and the direct produce
//! (`direct_produce`) find their client this way.
//!
//! librdkafka is found among the process's shared objects by name; where it is not
//! (or off Linux), [`rdkafka`] is None and the callers use confluent-kafka's own calls.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Arc, Mutex, OnceLock};

/// The client property that names a client to [`client_of`].
pub const TOKEN_PROPERTY: &str = "rmqcompat.token";
const INTERCEPTOR: &CStr = c"rmqcompat";

pub(crate) const RESP_OK: c_int = 0;
const RESP_FAIL: c_int = -196; // RD_KAFKA_RESP_ERR__FAIL
const CONF_UNKNOWN: c_int = -2;
const CONF_OK: c_int = 0;

/// `rd_kafka_message_t`, librdkafka's public message struct.
#[repr(C)]
pub(crate) struct RdMessage {
    pub err: c_int,
    pub rkt: *mut c_void,
    pub partition: i32,
    pub payload: *mut c_void,
    pub len: usize,
    pub key: *mut c_void,
    pub key_len: usize,
    pub offset: i64,
    _private: *mut c_void,
}

type OnConfSet = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    *const c_char,
    *mut c_char,
    usize,
    *mut c_void,
) -> c_int;
type OnNew =
    unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void, *mut c_char, usize) -> c_int;
type OnOpaque = unsafe extern "C" fn(*mut c_void) -> c_int;
type OnDestroy = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;

/// The librdkafka functions used here.
pub(crate) struct Rdkafka {
    pub add_on_conf_set:
        unsafe extern "C" fn(*mut c_void, *const c_char, OnConfSet, *mut c_void) -> c_int,
    pub add_on_new: unsafe extern "C" fn(*mut c_void, *const c_char, OnNew, *mut c_void) -> c_int,
    pub add_on_conf_destroy:
        unsafe extern "C" fn(*mut c_void, *const c_char, OnOpaque, *mut c_void) -> c_int,
    pub add_on_destroy:
        unsafe extern "C" fn(*mut c_void, *const c_char, OnDestroy, *mut c_void) -> c_int,
    pub queue_new: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    pub queue_destroy: unsafe extern "C" fn(*mut c_void),
    pub queue_get_partition: unsafe extern "C" fn(*mut c_void, *const c_char, i32) -> *mut c_void,
    pub queue_forward: unsafe extern "C" fn(*mut c_void, *mut c_void),
    pub consume_batch_queue:
        unsafe extern "C" fn(*mut c_void, c_int, *mut *mut RdMessage, usize) -> isize,
    pub topic_name: unsafe extern "C" fn(*mut c_void) -> *const c_char,
    pub message_headers: unsafe extern "C" fn(*const RdMessage, *mut *mut c_void) -> c_int,
    pub header_get_all: unsafe extern "C" fn(
        *const c_void,
        usize,
        *mut *const c_char,
        *mut *const c_void,
        *mut usize,
    ) -> c_int,
    pub message_timestamp: unsafe extern "C" fn(*const RdMessage, *mut c_int) -> i64,
    pub message_errstr: unsafe extern "C" fn(*const RdMessage) -> *const c_char,
    pub message_destroy: unsafe extern "C" fn(*mut RdMessage),
    pub topic_new: unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_void) -> *mut c_void,
    pub topic_destroy: unsafe extern "C" fn(*mut c_void),
    pub produceva: unsafe extern "C" fn(*mut c_void, *const Vu, usize) -> *mut c_void,
    pub error_code: unsafe extern "C" fn(*const c_void) -> c_int,
    pub error_string: unsafe extern "C" fn(*const c_void) -> *const c_char,
    pub error_is_fatal: unsafe extern "C" fn(*const c_void) -> c_int,
    pub error_is_retriable: unsafe extern "C" fn(*const c_void) -> c_int,
    pub error_txn_requires_abort: unsafe extern "C" fn(*const c_void) -> c_int,
    pub error_destroy: unsafe extern "C" fn(*mut c_void),
}

/// `rd_kafka_vu_t`: one field of a message handed to `rd_kafka_produceva`, a
/// `rd_kafka_vtype_t` and its value.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Vu {
    pub vtype: c_int,
    pub u: VuValue,
}

/// The union of `rd_kafka_vu_t`, 64 bytes of padding included.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) union VuValue {
    pub pointer: *const c_void,
    pub int: c_int,
    pub mem: VuMem,
    pub header: VuHeader,
    _pad: [u8; 64],
}

/// The `mem` member of [`VuValue`]: a value or key.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct VuMem {
    pub pointer: *const c_void,
    pub size: usize,
}

/// The `header` member of [`VuValue`]: a header's name (NUL-ended), value and size.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct VuHeader {
    pub name: *const c_char,
    pub value: *const c_void,
    pub size: isize,
}

#[cfg(target_os = "linux")]
extern "C" {
    fn dlopen(path: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn dl_iterate_phdr(
        callback: unsafe extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> c_int,
        data: *mut c_void,
    ) -> c_int;
}

#[cfg(target_os = "linux")]
/// The start of glibc's and musl's `struct dl_phdr_info`: what `dl_iterate_phdr` names each object by.
#[repr(C)]
struct DlPhdrInfo {
    addr: usize,
    name: *const c_char,
}

#[cfg(target_os = "linux")]
const RTLD_NOW: c_int = 2;
#[cfg(target_os = "linux")]
const RTLD_NOLOAD: c_int = 4;

#[cfg(target_os = "linux")]
unsafe extern "C" fn find_rdkafka(info: *mut DlPhdrInfo, _size: usize, data: *mut c_void) -> c_int {
    let name = (*info).name;
    if name.is_null() {
        return 0;
    }
    let path = CStr::from_ptr(name);
    let file = path
        .to_bytes()
        .rsplit(|b| *b == b'/')
        .next()
        .unwrap_or_default();
    if file.starts_with(b"librdkafka") && file.windows(3).any(|w| w == b".so") {
        *data.cast::<Option<CString>>() = Some(path.to_owned());
        return 1;
    }
    0
}

/// Elsewhere than on Linux the consumer reads through `consume()`.
#[cfg(not(target_os = "linux"))]
fn load() -> Option<Rdkafka> {
    None
}

#[cfg(target_os = "linux")]
fn load() -> Option<Rdkafka> {
    let mut found: Option<CString> = None;
    // SAFETY: the callback writes the `Option<CString>` `data` points at, on this thread.
    unsafe { dl_iterate_phdr(find_rdkafka, (&mut found as *mut Option<CString>).cast()) };
    let path = found?;
    // SAFETY: only a library already loaded is opened (RTLD_NOLOAD), and each symbol is
    // taken as the function librdkafka's public header declares under that name.
    unsafe {
        let handle = dlopen(path.as_ptr(), RTLD_NOW | RTLD_NOLOAD);
        if handle.is_null() {
            return None;
        }
        macro_rules! symbol {
            ($name:literal) => {{
                let pointer = dlsym(handle, $name.as_ptr());
                if pointer.is_null() {
                    return None;
                }
                std::mem::transmute_copy(&pointer)
            }};
        }
        Some(Rdkafka {
            add_on_conf_set: symbol!(c"rd_kafka_conf_interceptor_add_on_conf_set"),
            add_on_new: symbol!(c"rd_kafka_conf_interceptor_add_on_new"),
            add_on_conf_destroy: symbol!(c"rd_kafka_conf_interceptor_add_on_conf_destroy"),
            add_on_destroy: symbol!(c"rd_kafka_interceptor_add_on_destroy"),
            queue_new: symbol!(c"rd_kafka_queue_new"),
            queue_destroy: symbol!(c"rd_kafka_queue_destroy"),
            queue_get_partition: symbol!(c"rd_kafka_queue_get_partition"),
            queue_forward: symbol!(c"rd_kafka_queue_forward"),
            consume_batch_queue: symbol!(c"rd_kafka_consume_batch_queue"),
            topic_name: symbol!(c"rd_kafka_topic_name"),
            message_headers: symbol!(c"rd_kafka_message_headers"),
            header_get_all: symbol!(c"rd_kafka_header_get_all"),
            message_timestamp: symbol!(c"rd_kafka_message_timestamp"),
            message_errstr: symbol!(c"rd_kafka_message_errstr"),
            message_destroy: symbol!(c"rd_kafka_message_destroy"),
            topic_new: symbol!(c"rd_kafka_topic_new"),
            topic_destroy: symbol!(c"rd_kafka_topic_destroy"),
            produceva: symbol!(c"rd_kafka_produceva"),
            error_code: symbol!(c"rd_kafka_error_code"),
            error_string: symbol!(c"rd_kafka_error_string"),
            error_is_fatal: symbol!(c"rd_kafka_error_is_fatal"),
            error_is_retriable: symbol!(c"rd_kafka_error_is_retriable"),
            error_txn_requires_abort: symbol!(c"rd_kafka_error_txn_requires_abort"),
            error_destroy: symbol!(c"rd_kafka_error_destroy"),
        })
    }
}

/// librdkafka's functions, once the process has loaded it (looked for again until then:
/// confluent-kafka may be imported after this library).
pub(crate) fn rdkafka() -> Option<&'static Rdkafka> {
    static RDKAFKA: OnceLock<Rdkafka> = OnceLock::new();
    if let Some(rd) = RDKAFKA.get() {
        return Some(rd);
    }
    let loaded = load()?;
    Some(RDKAFKA.get_or_init(|| loaded))
}

/// A client's handle (0 once destroyed) and the direct fetch's queue on it (0: none),
/// shared by its interceptors and whoever took it with [`client_of`].
pub(crate) struct Client {
    pub rk: usize,
    pub queue: usize,
}

/// Token -> the client created with it, until the client is destroyed.
fn clients() -> &'static Mutex<HashMap<String, Arc<Mutex<Client>>>> {
    static CLIENTS: OnceLock<Mutex<HashMap<String, Arc<Mutex<Client>>>>> = OnceLock::new();
    CLIENTS.get_or_init(Default::default)
}

/// The interceptors' state of one client configuration: the token it was given.
struct Slot {
    token: Mutex<Option<String>>,
}

/// librdkafka's plugin entry point (`plugin.library.paths`): adds the interceptors to
/// `conf`. Fails, with a reason in `errstr`, where librdkafka's functions are not found.
///
/// # Safety
/// Called by librdkafka with a configuration, a place for the plugin's opaque value and
/// an error buffer of `errstr_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn conf_init(
    conf: *mut c_void,
    _plug_opaque: *mut *mut c_void,
    errstr: *mut c_char,
    errstr_size: usize,
) -> c_int {
    let Some(rd) = rdkafka() else {
        write_error(
            errstr,
            errstr_size,
            "rmqcompat: librdkafka's functions not found",
        );
        return RESP_FAIL;
    };
    let slot = Box::into_raw(Box::new(Slot {
        token: Mutex::new(None),
    }))
    .cast::<c_void>();
    let name = INTERCEPTOR.as_ptr();
    if (rd.add_on_conf_destroy)(conf, name, on_conf_destroy, slot) != RESP_OK {
        drop(Box::from_raw(slot.cast::<Slot>())); // added once already: that one serves
        return RESP_OK;
    }
    (rd.add_on_conf_set)(conf, name, on_conf_set, slot);
    (rd.add_on_new)(conf, name, on_new, slot);
    RESP_OK
}

unsafe fn write_error(errstr: *mut c_char, size: usize, text: &str) {
    if errstr.is_null() || size == 0 {
        return;
    }
    let n = text.len().min(size - 1);
    std::ptr::copy_nonoverlapping(text.as_ptr(), errstr.cast::<u8>(), n);
    *errstr.add(n) = 0;
}

unsafe extern "C" fn on_conf_set(
    _conf: *mut c_void,
    name: *const c_char,
    value: *const c_char,
    _errstr: *mut c_char,
    _errstr_size: usize,
    opaque: *mut c_void,
) -> c_int {
    if CStr::from_ptr(name).to_bytes() != TOKEN_PROPERTY.as_bytes() {
        return CONF_UNKNOWN;
    }
    let slot = &*opaque.cast::<Slot>();
    let token = (!value.is_null()).then(|| CStr::from_ptr(value).to_string_lossy().into_owned());
    *slot.token.lock().unwrap_or_else(|e| e.into_inner()) = token;
    CONF_OK
}

unsafe extern "C" fn on_new(
    rk: *mut c_void,
    _conf: *const c_void,
    opaque: *mut c_void,
    _errstr: *mut c_char,
    _errstr_size: usize,
) -> c_int {
    let slot = &*opaque.cast::<Slot>();
    let token = slot.token.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let (Some(token), Some(rd)) = (token, rdkafka()) {
        let client = Arc::new(Mutex::new(Client {
            rk: rk as usize,
            queue: 0,
        }));
        let mut map = clients().lock().unwrap_or_else(|e| e.into_inner());
        map.insert(token.clone(), client);
        drop(map);
        let boxed = Box::into_raw(Box::new(token)).cast::<c_void>();
        (rd.add_on_destroy)(rk, INTERCEPTOR.as_ptr(), on_destroy, boxed);
    }
    RESP_OK
}

unsafe extern "C" fn on_conf_destroy(opaque: *mut c_void) -> c_int {
    drop(Box::from_raw(opaque.cast::<Slot>()));
    RESP_OK
}

/// The client is being destroyed: the direct fetch's queue goes first, and its fetch ends.
unsafe extern "C" fn on_destroy(_rk: *mut c_void, opaque: *mut c_void) -> c_int {
    let token = Box::from_raw(opaque.cast::<String>());
    let client = clients()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(token.as_str());
    if let (Some(client), Some(rd)) = (client, rdkafka()) {
        let mut client = client.lock().unwrap_or_else(|e| e.into_inner());
        if client.queue != 0 {
            (rd.queue_destroy)(client.queue as *mut c_void);
        }
        client.queue = 0;
        client.rk = 0;
    }
    RESP_OK
}

/// The client created with `token` (its configuration named this library in
/// `plugin.library.paths` and gave [`TOKEN_PROPERTY`]) while it lives, or None.
pub(crate) fn client_of(token: &str) -> Option<Arc<Mutex<Client>>> {
    rdkafka()?;
    let client = clients()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(token)
        .cloned()?;
    let live = client.lock().unwrap_or_else(|e| e.into_inner()).rk != 0;
    live.then_some(client)
}

/// Whether this process can take its clients' handles this way: librdkafka's functions
/// were found.
#[pyo3::pyfunction]
pub fn plugin_available() -> bool {
    rdkafka().is_some()
}
