//! The live counters of a running `lossless tap` (`--metrics ADDR`): an HTTP server on its
//! own thread. `GET /metrics` is the Prometheus text exposition
//! ([`crate::report::prometheus`]), `GET /json` the report the switch would write if it
//! stopped now, `GET /show/pfc|queue|watermark|cbfc|llr|trim|ledger|p4` the tables `lossless show` prints.
//! Reports come from the pipeline thread through [`Live`].
//!
//! The endpoint faces whatever can reach it (the container image listens on 0.0.0.0), so
//! no client can hold it: HTTP is hyper's (malformed requests get 400, a head over
//! [`MAX_HEAD`] bytes 431), connections are served concurrently on one thread, each has
//! [`HEAD_WAIT`] to send its request and [`CONNECTION_LIFE`] in all, at most
//! [`MAX_CONNECTIONS`] are open (a new one closes the oldest that has not sent a request
//! yet — never one whose answer is under way; with every one answering, the new one is
//! closed), and each connection answers one request. It has no authentication: bind it
//! where only those who may read the counters reach it (docs/tap.md, "Live counters").

use super::live::{Live, ANSWER_WAIT};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Connections open at once; a new connection beyond this closes the oldest that has not
/// sent its request, so that idle or slow clients cannot keep a scrape out, and no new
/// one cuts a scrape short.
pub const MAX_CONNECTIONS: usize = 256;
/// How long a client may take to send its request head.
pub const HEAD_WAIT: Duration = Duration::from_secs(3);
/// How long a connection may live in all: request, answer, and the client reading it.
pub const CONNECTION_LIFE: Duration = Duration::from_secs(10);
/// Largest request head (request line and headers) read, in bytes (hyper's read buffer;
/// 8 KiB is its least).
pub const MAX_HEAD: usize = 16 * 1024;
/// Largest request body read (and thrown away) before a request other than GET gets its
/// 405; a longer one gets 413 and the connection closes.
pub const MAX_BODY: usize = 16 * 1024 * 1024;
/// Reports built at once (each on a blocking thread, waiting up to [`ANSWER_WAIT`] for the
/// pipeline thread): requests beyond wait their turn, and share the report that comes.
const ANSWERS_AT_ONCE: usize = 4;

/// Bind `addr` (before any device is opened, so that an address in use fails first).
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr).map_err(|e| {
        let why = if e.kind() == io::ErrorKind::AddrInUse {
            "the address is in use".to_string()
        } else {
            e.to_string()
        };
        io::Error::new(e.kind(), format!("--metrics {addr}: {why}"))
    })
}

/// Serve `listener` on a thread for as long as the process lives.
pub fn serve(listener: TcpListener, live: Arc<Live>) -> io::Result<JoinHandle<()>> {
    listener.set_nonblocking(true)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(ANSWERS_AT_ONCE)
        .thread_name("metrics-answer")
        .build()?;
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || rt.block_on(accept(listener, live)))
}

/// The connections open, oldest first; dropping a connection's sender closes it. Each
/// has a flag its server sets when its request arrived.
#[derive(Default)]
struct Open {
    next: u64,
    conns: BTreeMap<u64, (tokio::sync::oneshot::Sender<()>, Arc<AtomicBool>)>,
}

impl Open {
    /// Make room for a new connection: with [`MAX_CONNECTIONS`] open, close the oldest
    /// that has not sent its request. False: every one is answering, so the new one must
    /// wait its turn (it is closed).
    fn make_room(&mut self) -> bool {
        if self.conns.len() < MAX_CONNECTIONS {
            return true;
        }
        let idle = self
            .conns
            .iter()
            .find(|(_, (_, asked))| !asked.load(Ordering::Acquire))
            .map(|(id, _)| *id);
        match idle {
            Some(id) => {
                self.conns.remove(&id);
                true
            }
            None => false,
        }
    }
}

/// What serves requests: the reports' source and the turns to build them.
#[derive(Clone)]
pub struct Endpoint {
    live: Arc<Live>,
    answers: Arc<tokio::sync::Semaphore>,
}

impl Endpoint {
    /// An endpoint answering from `live`.
    pub fn new(live: Arc<Live>) -> Endpoint {
        Endpoint {
            live,
            answers: Arc::new(tokio::sync::Semaphore::new(ANSWERS_AT_ONCE)),
        }
    }

    /// Serve one connection on `io` (a socket, or an in-memory pipe in the tests): one
    /// request and its answer, within [`HEAD_WAIT`] for the head and [`CONNECTION_LIFE`]
    /// in all. Runs on a tokio runtime with time and a blocking pool.
    pub async fn serve<I>(&self, io: I)
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_marked(io, Arc::default()).await
    }

    /// [`Endpoint::serve`], setting `asked` when the request has arrived (from then on
    /// the connection is a scrape under way).
    async fn serve_marked<I>(&self, io: I, asked: Arc<AtomicBool>)
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let me = self.clone();
        let service = hyper::service::service_fn(move |req| {
            asked.store(true, Ordering::Release);
            answer(req, Arc::clone(&me.live), Arc::clone(&me.answers))
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEAD_WAIT)
            .max_buf_size(MAX_HEAD)
            .keep_alive(false)
            .serve_connection(hyper_util::rt::TokioIo::new(io), service);
        let _ = tokio::time::timeout(CONNECTION_LIFE, conn).await;
    }
}

/// Accept connections for ever, each served on its own task.
async fn accept(listener: TcpListener, live: Arc<Live>) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("lossless tap: --metrics stopped: {e}");
            return;
        }
    };
    let open = Arc::new(Mutex::new(Open::default()));
    let endpoint = Endpoint::new(live);
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            // Out of file descriptors or a connection reset before it was accepted: wait
            // a little (the open ones time out) and go on.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let (closer, closed) = tokio::sync::oneshot::channel::<()>();
        let asked = Arc::new(AtomicBool::new(false));
        let id = {
            let mut o = open.lock().unwrap_or_else(|e| e.into_inner());
            if !o.make_room() {
                // Every connection is a scrape under way: this one waits its turn.
                drop(stream);
                continue;
            }
            o.next += 1;
            let id = o.next;
            o.conns.insert(id, (closer, Arc::clone(&asked)));
            id
        };
        let (endpoint, open) = (endpoint.clone(), Arc::clone(&open));
        tokio::spawn(async move {
            tokio::select! {
                _ = closed => {}
                _ = endpoint.serve_marked(stream, asked) => {}
            }
            open.lock()
                .unwrap_or_else(|e| e.into_inner())
                .conns
                .remove(&id);
        });
    }
}

/// The answer to one request.
async fn answer(
    req: Request<Incoming>,
    live: Arc<Live>,
    answers: Arc<tokio::sync::Semaphore>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() != Method::GET {
        // Read the body before answering (bounded), so that the client reads a 405, not a
        // reset of a connection closed with its data unread.
        let too_long = drain(req.into_body(), MAX_BODY).await;
        let (status, text) = if too_long {
            (StatusCode::PAYLOAD_TOO_LARGE, "GET only\n")
        } else {
            (StatusCode::METHOD_NOT_ALLOWED, "GET only\n")
        };
        let mut r = reply(status, "text/plain", text.into());
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET"));
        return Ok(r);
    }
    let path = req.uri().path().to_string();
    let Ok(_turn) = answers.acquire_owned().await else {
        return Ok(reply(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "the endpoint is stopping\n".into(),
        ));
    };
    let page = tokio::task::spawn_blocking(move || route(&path, &live)).await;
    Ok(match page {
        Ok((status, kind, body)) => reply(status, kind, body),
        Err(_) => reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            "the report could not be made\n".into(),
        ),
    })
}

/// Read and drop a request body up to `limit` bytes; true when it was longer.
async fn drain(mut body: Incoming, limit: usize) -> bool {
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(f) => {
                seen += f.data_ref().map_or(0, |d| d.len());
                if seen > limit {
                    return true;
                }
            }
            Err(_) => return false,
        }
    }
    false
}

fn reply(status: StatusCode, kind: &'static str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    r
}

/// The answer to `GET path`: status, content type, body. Blocks while it waits for the
/// pipeline thread's report.
fn route(path: &str, live: &Live) -> (StatusCode, &'static str, String) {
    // The tables' names are the ones `lossless show` takes on its command line.
    let table = |name: &str| <Table as clap::ValueEnum>::from_str(name, false).ok();
    enum Page {
        Metrics,
        Json,
        Show(Table),
    }
    let page =
        match path {
            "/metrics" => Page::Metrics,
            "/json" => Page::Json,
            p => match p.strip_prefix("/show/").and_then(table) {
                Some(t) => Page::Show(t),
                None => return (
                    StatusCode::NOT_FOUND,
                    "text/plain",
                    "try /metrics, /json or /show/pfc|queue|watermark|cbfc|llr|trim|ledger|p4\n"
                        .into(),
                ),
            },
        };
    let Some(r) = live.fetch() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "the switch did not answer in time\n".into(),
        );
    };
    match page {
        Page::Metrics => (
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            crate::report::prometheus::render(&r),
        ),
        Page::Json => (
            StatusCode::OK,
            "application/json",
            serde_json::to_string_pretty(&r.to_value()).expect("a report serializes") + "\n",
        ),
        Page::Show(t) => (
            StatusCode::OK,
            "text/plain; charset=utf-8",
            crate::report::text::table(&r, t),
        ),
    }
}

use crate::report::text::Table;

/// `GET path` from a running switch at `addr`: the body, or a one-line error.
pub fn get(addr: SocketAddr, path: &str) -> Result<String, String> {
    let wait = ANSWER_WAIT * 2;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| {
        if e.kind() == io::ErrorKind::ConnectionRefused {
            format!("nothing is listening on {addr} (start the switch with `lossless tap FILE --metrics {addr}`)")
        } else {
            format!("cannot reach {addr}: {e}")
        }
    })?;
    s.set_read_timeout(Some(wait)).map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(wait)).map_err(|e| e.to_string())?;
    let timed_out = |e: io::Error| {
        if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            format!("{addr} did not answer within {} s", wait.as_secs())
        } else {
            format!("{addr}: {e}")
        }
    };
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .map_err(timed_out)?;
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut s, &mut bytes).map_err(timed_out)?;
    let text = String::from_utf8_lossy(&bytes);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{addr} did not answer in HTTP"))?;
    let status = head.lines().next().unwrap_or("");
    if !status.contains(" 200 ") {
        return Err(format!("{addr} answered {status}: {}", body.trim()));
    }
    Ok(body.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Full of connections: a new one closes the oldest that has not asked yet, never a
    /// scrape under way; with every one answering, none is closed and the new one waits.
    #[test]
    fn a_new_connection_closes_an_idle_one_never_a_scrape() {
        let mut open = Open::default();
        let mut receivers = Vec::new();
        for id in 0..MAX_CONNECTIONS as u64 {
            let (tx, rx) = tokio::sync::oneshot::channel();
            // The oldest two are answering.
            open.conns
                .insert(id, (tx, Arc::new(AtomicBool::new(id < 2))));
            receivers.push(rx);
        }
        assert!(open.make_room());
        assert!(open.conns.contains_key(&0) && open.conns.contains_key(&1));
        assert!(
            !open.conns.contains_key(&2),
            "the oldest idle one is closed"
        );
        assert_eq!(
            receivers[2].try_recv(),
            Err(tokio::sync::oneshot::error::TryRecvError::Closed),
            "its sender is dropped: the connection closes"
        );
        assert_eq!(
            receivers[0].try_recv(),
            Err(tokio::sync::oneshot::error::TryRecvError::Empty)
        );
        for (_, asked) in open.conns.values() {
            asked.store(true, Ordering::Release);
        }
        open.conns.insert(
            1000,
            (
                tokio::sync::oneshot::channel().0,
                Arc::new(AtomicBool::new(true)),
            ),
        );
        let before = open.conns.len();
        assert!(!open.make_room());
        assert_eq!(open.conns.len(), before, "no scrape is cut short");
    }
}
