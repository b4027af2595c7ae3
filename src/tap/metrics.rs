//! Live counters of a running `lossless tap` (`--metrics ADDR`): a small HTTP server on
//! its own thread. `GET /metrics` is the Prometheus text exposition
//! ([`crate::report::prometheus`]), `GET /json` the report the switch would write if it
//! stopped now, `GET /show/pfc|queue|watermark|ledger` the tables `lossless show` prints.
//!
//! The pipeline thread owns the switch, so a request asks it for a fresh report
//! ([`Live::wanted`], looked at on every turn of its loop, at most 50 ms apart) and waits
//! for it; once the switch has stopped, requests get the final report at once, which is
//! why the last scrape and the JSON written at exit agree.

use crate::report::model::Report;
use crate::report::text::Table;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a request waits for the pipeline thread's report.
const ANSWER_WAIT: Duration = Duration::from_secs(2);
/// How long a client may take to send its request.
const REQUEST_WAIT: Duration = Duration::from_secs(2);
/// Longest request head read.
const MAX_REQUEST: usize = 8192;

#[derive(Default)]
struct State {
    /// Requests made, and the last one answered.
    asked: u64,
    answered: u64,
    report: Option<Arc<Report>>,
    /// The switch has stopped: `report` is final.
    finished: bool,
}

/// Reports handed from the pipeline thread to the HTTP thread.
#[derive(Default)]
pub struct Live {
    want: AtomicBool,
    state: Mutex<State>,
    ready: Condvar,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("wanted", &self.wanted())
            .finish()
    }
}

impl Live {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Does a request wait for a report? (The pipeline thread asks on every turn.)
    pub fn wanted(&self) -> bool {
        self.want.load(Ordering::Relaxed)
    }

    /// Answer the requests waiting with `r`.
    pub fn publish(&self, r: Report) {
        let mut s = self.lock();
        self.want.store(false, Ordering::Relaxed);
        s.answered = s.asked;
        s.report = Some(Arc::new(r));
        self.ready.notify_all();
    }

    /// The switch stopped: `r` is the final report, the answer to every later request.
    pub fn finish(&self, r: Report) {
        self.publish(r);
        self.lock().finished = true;
    }

    /// A report at least as new as this call (None if the pipeline thread did not answer
    /// in time).
    fn fetch(&self) -> Option<Arc<Report>> {
        let mut s = self.lock();
        if s.finished {
            return s.report.clone();
        }
        s.asked += 1;
        let ticket = s.asked;
        self.want.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + ANSWER_WAIT;
        while s.answered < ticket && !s.finished {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            s = self
                .ready
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        s.report.clone()
    }
}

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
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            for conn in listener.incoming().flatten() {
                let _ = answer(conn, &live);
            }
        })
}

/// Read one request and answer it.
fn answer(conn: TcpStream, live: &Live) -> io::Result<()> {
    conn.set_read_timeout(Some(REQUEST_WAIT))?;
    conn.set_write_timeout(Some(REQUEST_WAIT))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    // The rest of the head: read and ignore (bounded).
    let mut seen = line.len();
    loop {
        let mut h = String::new();
        let n = reader.read_line(&mut h)?;
        seen += n;
        if n == 0 || h == "\r\n" || h == "\n" || seen > MAX_REQUEST {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (status, kind, body) = if method != "GET" {
        (
            "405 Method Not Allowed",
            "text/plain",
            "GET only\n".to_string(),
        )
    } else {
        route(path, live)
    };
    let mut out = conn;
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}

/// The answer to `GET path`: status, content type, body.
fn route(path: &str, live: &Live) -> (&'static str, &'static str, String) {
    let path = path.split('?').next().unwrap_or("");
    // The tables' names are the ones `lossless show` takes on its command line.
    let table = |name: &str| <Table as clap::ValueEnum>::from_str(name, false).ok();
    enum Page {
        Metrics,
        Json,
        Show(Table),
    }
    let page = match path {
        "/metrics" => Page::Metrics,
        "/json" => Page::Json,
        p => match p.strip_prefix("/show/").and_then(table) {
            Some(t) => Page::Show(t),
            None => {
                return (
                    "404 Not Found",
                    "text/plain",
                    "try /metrics, /json or /show/pfc|queue|watermark|ledger\n".into(),
                )
            }
        },
    };
    let Some(r) = live.fetch() else {
        return (
            "503 Service Unavailable",
            "text/plain",
            "the switch did not answer in time\n".into(),
        );
    };
    match page {
        Page::Metrics => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            crate::report::prometheus::render(&r),
        ),
        Page::Json => (
            "200 OK",
            "application/json",
            serde_json::to_string_pretty(&r.to_value()).expect("a report serializes") + "\n",
        ),
        Page::Show(t) => (
            "200 OK",
            "text/plain; charset=utf-8",
            crate::report::text::table(&r, t),
        ),
    }
}

/// `GET path` from a running switch at `addr`: the body, or a one-line error.
pub fn get(addr: SocketAddr, path: &str) -> Result<String, String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| {
        if e.kind() == io::ErrorKind::ConnectionRefused {
            format!("nothing is listening on {addr} (start the switch with `lossless tap FILE --metrics {addr}`)")
        } else {
            format!("cannot reach {addr}: {e}")
        }
    })?;
    s.set_read_timeout(Some(ANSWER_WAIT * 2))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("{addr}: {e}"))?;
    let mut text = String::new();
    io::Read::read_to_string(&mut s, &mut text).map_err(|e| format!("{addr}: {e}"))?;
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{addr} did not answer in HTTP"))?;
    let status = head.lines().next().unwrap_or("");
    if !status.contains(" 200 ") {
        return Err(format!("{addr} answered {status}: {}", body.trim()));
    }
    Ok(body.to_string())
}
