//! `-x prometheus[=ADDRESS]`: the aggregations served over HTTP to Prometheus while the
//! script runs (`docs/PROMETHEUS.md`).
//!
//! A thread of its own accepts connections one at a time and answers `GET /metrics` with
//! the consumer's exposition ([`Exporter`]), read at that moment from the kernel maps
//! through duplicated map descriptors. It shares no lock, buffer or state with the
//! session's loop, so a scrape, however slow, never holds up the reading of records; the
//! kernel side of tracing never waits for anyone. The thread ends with the process.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use dtrace_backend::program::Compiled;
use dtrace_consumer::prometheus::{Exporter, Naming, CONTENT_TYPE};
use dtrace_runtime::Map;

use crate::agg_maps::AggMaps;

/// Where `-x prometheus` listens when no address is given: loopback only.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:9464";

/// The longest a client may take to send its request or read the answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

/// The most of a request read (its request line and headers).
const MAX_REQUEST: usize = 8192;

/// A `prometheus` option's value: `HOST:PORT` with a numeric host, `localhost:PORT`, or a
/// port alone (`PORT`, `:PORT`), which listens on loopback.
pub fn address(value: Option<&str>) -> Option<SocketAddr> {
    let value = value.filter(|v| !v.is_empty()).unwrap_or(DEFAULT_ADDRESS);
    let port = value.strip_prefix(':').unwrap_or(value);
    if let Ok(port) = port.parse::<u16>() {
        return Some(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = value.strip_prefix("localhost:") {
        return Some(SocketAddr::from(([127, 0, 0, 1], port.parse().ok()?)));
    }
    value.parse().ok()
}

/// Start serving the aggregations of `compiled`, loaded in `maps`, at `addr`; the address
/// listened on (the port chosen, for port 0).
pub fn serve(
    addr: SocketAddr,
    compiled: &Compiled,
    maps: &[Map],
    naming: Naming,
) -> Result<SocketAddr, String> {
    let descs = compiled.desc.aggregations.clone();
    naming
        .check(&descs)
        .map_err(|why| format!("dtrace: failed to serve metrics: {why}\n"))?;
    let fail = |e: String| format!("dtrace: failed to serve metrics at {addr}: {e}\n");
    let aggs = AggMaps::duplicated(compiled, maps).map_err(fail)?;
    let drops = maps[compiled.core.drops.0]
        .try_clone()
        .map_err(|e| fail(e.to_string()))?;
    let listener = TcpListener::bind(addr).map_err(|e| fail(e.to_string()))?;
    let local = listener.local_addr().map_err(|e| fail(e.to_string()))?;
    std::thread::Builder::new()
        .name("prometheus".into())
        .spawn(move || {
            let mut exporter = Exporter::new(&descs, naming);
            for client in listener.incoming().flatten() {
                let _ = answer(client, &mut exporter, &aggs, &drops);
            }
        })
        .map_err(|e| fail(e.to_string()))?;
    Ok(local)
}

/// Read one request from `client` and answer it.
fn answer(
    mut client: TcpStream,
    exporter: &mut Exporter,
    aggs: &AggMaps<Map>,
    drops: &Map,
) -> std::io::Result<()> {
    client.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    client.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < MAX_REQUEST {
        let n = client.read(&mut buf)?;
        if n == 0 {
            break;
        }
        request.extend_from_slice(&buf[..n]);
    }
    let line =
        String::from_utf8_lossy(request.split(|&b| b == b'\r').next().unwrap_or(&[])).into_owned();
    let mut words = line.split(' ');
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let text = "text/plain; charset=utf-8";
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => {
            let percpu = drops.lookup_percpu(&0u32.to_ne_bytes()).ok().flatten();
            let body = exporter.scrape(aggs, &percpu.unwrap_or_default());
            ("200 OK", CONTENT_TYPE, body)
        }
        ("GET" | "HEAD", _) => ("404 Not Found", text, "Metrics are at /metrics.\n".into()),
        _ => ("405 Method Not Allowed", text, "Only GET.\n".into()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    client.write_all(head.as_bytes())?;
    if method != "HEAD" {
        client.write_all(body.as_bytes())?;
    }
    client.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let loopback = |port| Some(SocketAddr::from(([127, 0, 0, 1], port)));
        assert_eq!(address(None), loopback(9464));
        assert_eq!(address(Some("")), loopback(9464));
        assert_eq!(address(Some("9100")), loopback(9100));
        assert_eq!(address(Some(":9100")), loopback(9100));
        assert_eq!(address(Some("localhost:0")), loopback(0));
        assert_eq!(
            address(Some("0.0.0.0:9464")),
            Some(SocketAddr::from(([0, 0, 0, 0], 9464)))
        );
        assert_eq!(address(Some("[::1]:80")).map(|a| a.is_ipv6()), Some(true));
        assert_eq!(address(Some("example.com:80")), None);
        assert_eq!(address(Some("70000")), None);
    }
}
