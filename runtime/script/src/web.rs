//! The Rust half of the web globals (`web.js`): WHATWG URL parsing, random bytes, and
//! `fetch` over the runtime's HTTP client.
//!
//! Bodies cross as "binary strings": one `char` per byte, U+0000 to U+00FF.

use serde_json::json;
use std::time::Duration;
use svc_sdk::Host;
use svc_sdk::fetch::{Request, Response};

/// A URL's parts as `URL`'s getters return them, as JSON; `None` when `input` (against
/// `base`) is not a valid URL.
pub fn parse_url(input: &str, base: Option<&str>) -> Option<String> {
    let url = match base {
        Some(base) => url::Url::parse(base).ok()?.join(input).ok()?,
        None => url::Url::parse(input).ok()?,
    };
    Some(parts(&url))
}

/// The parts after setting `part` of `href` to `value`; `None` when the value is refused.
pub fn set_url_part(href: &str, part: &str, value: &str) -> Option<String> {
    let mut url = url::Url::parse(href).ok()?;
    let ok = match part {
        "href" => {
            url = url::Url::parse(value).ok()?;
            true
        }
        "protocol" => url.set_scheme(value.trim_end_matches(':')).is_ok(),
        "username" => url.set_username(value).is_ok(),
        "password" => url.set_password(Some(value).filter(|v| !v.is_empty())).is_ok(),
        "host" => match value.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') && port.chars().all(|c| c.is_ascii_digit()) => {
                url.set_host(Some(host)).is_ok() && url.set_port(port.parse().ok()).is_ok()
            }
            _ => url.set_host(Some(value)).is_ok(),
        },
        "hostname" => url.set_host(Some(value)).is_ok(),
        "port" => url
            .set_port(if value.is_empty() {
                None
            } else {
                Some(value.parse().ok()?)
            })
            .is_ok(),
        "pathname" => {
            url.set_path(value);
            true
        }
        "search" => {
            let query = value.strip_prefix('?').unwrap_or(value);
            url.set_query(Some(query).filter(|q| !q.is_empty()));
            true
        }
        "hash" => {
            let fragment = value.strip_prefix('#').unwrap_or(value);
            url.set_fragment(Some(fragment).filter(|f| !f.is_empty()));
            true
        }
        _ => false,
    };
    ok.then(|| parts(&url))
}

fn parts(url: &url::Url) -> String {
    let search = url
        .query()
        .filter(|q| !q.is_empty())
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let hash = url
        .fragment()
        .filter(|f| !f.is_empty())
        .map(|f| format!("#{f}"))
        .unwrap_or_default();
    let hostname = url.host_str().unwrap_or_default();
    let port = url.port().map(|p| p.to_string()).unwrap_or_default();
    let host = if port.is_empty() {
        hostname.to_string()
    } else {
        format!("{hostname}:{port}")
    };
    json!({
        "href": url.as_str(),
        "origin": url.origin().ascii_serialization(),
        "protocol": format!("{}:", url.scheme()),
        "username": url.username(),
        "password": url.password().unwrap_or_default(),
        "host": host,
        "hostname": hostname,
        "port": port,
        "pathname": url.path(),
        "search": search,
        "hash": hash,
    })
    .to_string()
}

/// `n` random bytes (at most 65536: `crypto.getRandomValues`' limit) from the OS.
pub fn random_bytes(n: usize) -> String {
    let mut bytes = vec![0u8; n.min(65536)];
    getrandom::fill(&mut bytes).expect("the operating system gives random bytes");
    binary_string(&bytes)
}

fn binary_string(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

fn from_binary_string(text: &str) -> Vec<u8> {
    text.chars().map(|c| c as u32 as u8).collect()
}

/// What `fetch` answers JS when no response came.
pub fn fetch_error(message: &str) -> String {
    json!({ "error": message }).to_string()
}

/// Performs the request (`web.js`'s JSON) through the runtime's client, within the
/// time the node has left; answers the response or the error as JSON.
///
/// The engine runs a node synchronously on its thread, so the call waits here: on a
/// multi-threaded runtime through `block_in_place` (the thread's other tasks move to
/// other workers meanwhile), elsewhere on a thread of its own.
pub fn fetch(host: &dyn Host, request: &str, remaining: Option<Duration>) -> String {
    #[derive(serde::Deserialize)]
    struct Outgoing {
        method: String,
        url: String,
        headers: Vec<(String, String)>,
        body: Option<String>,
    }
    let outgoing: Outgoing = match serde_json::from_str(request) {
        Ok(o) => o,
        Err(e) => return fetch_error(&format!("the request is malformed: {e}")),
    };
    let mut request = Request::new(&outgoing.method, outgoing.url);
    for (name, value) in &outgoing.headers {
        request.headers.append(name, value.clone());
    }
    if let Some(body) = &outgoing.body {
        request = request.body(from_binary_string(body));
    }
    if let Some(remaining) = remaining {
        if remaining.is_zero() {
            return fetch_error("the node's deadline has passed");
        }
        let timeout = request.timeout.map_or(remaining, |t| t.min(remaining));
        request = request.timeout(timeout);
    }
    match wait(host.fetch(request)) {
        Ok(Ok(response)) => answer(&response),
        Ok(Err(e)) => fetch_error(&e.to_string()),
        Err(e) => fetch_error(&e),
    }
}

fn answer(response: &Response) -> String {
    let headers: Vec<(&str, &str)> = response.headers.iter().collect();
    json!({
        "status": response.status,
        "url": response.url,
        "headers": headers,
        "body": binary_string(response.bytes()),
    })
    .to_string()
}

fn wait<F>(future: F) -> Result<F::Output, String>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    use tokio::runtime::{Builder, Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            Ok(tokio::task::block_in_place(|| handle.block_on(future)))
        }
        _ => std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map(|runtime| runtime.block_on(future))
                        .map_err(|e| format!("cannot start a runtime for fetch: {e}"))
                })
                .join()
                .map_err(|_| "fetch panicked".to_string())?
        }),
    }
}
