//! What `svc dev` does and what its server answered: the loop's status, the traces the
//! dev server posts, and replaying one to it.

use super::{SharedState, bad_request, error, failed};
use axum::extract::{Path as UrlPath, State as Shared};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

/// `?after=N`: the dev loop's report after number N, waiting up to [`TRACE_WAIT`] for it;
/// without it, the current one. `{"live": false}` under `svc studio`.
pub(super) async fn dev_status(
    Shared(state): SharedState,
    axum::extract::Query(After { after }): axum::extract::Query<After>,
) -> Response {
    let Some(mut status) = state.dev_status.clone() else {
        return axum::Json(json!({ "live": false })).into_response();
    };
    if let Some(after) = after.and_then(|a| u64::try_from(a).ok()) {
        let newer = status.wait_for(|s| s.generation > after);
        // A timeout answers with the same report; the page asks again.
        let _ = tokio::time::timeout(TRACE_WAIT, newer).await;
    }
    let now = status.borrow().clone();
    let mut answer = serde_json::to_value(now).unwrap_or_default();
    answer["live"] = json!(true);
    axum::Json(answer).into_response()
}

/// How long `GET /api/traces` waits for a new request before answering with none.
const TRACE_WAIT: Duration = Duration::from_secs(10);

/// `?after=N`: the traces after number N, waiting for one when there is none yet
/// (`after=-1`: any). Without it: every trace kept, at once.
#[derive(Deserialize)]
pub(super) struct After {
    after: Option<i64>,
}

pub(super) async fn traces(
    Shared(state): SharedState,
    axum::extract::Query(After { after }): axum::extract::Query<After>,
) -> Response {
    let since = after.and_then(|a| u64::try_from(a).ok());
    // Listening before looking, so that a trace arriving in between is not missed.
    let arrival = state.traces.arrivals().notified();
    tokio::pin!(arrival);
    arrival.as_mut().enable();
    let mut found = state.traces.since(since);
    if found.is_empty() && after.is_some() && state.server.is_some() {
        let _ = tokio::time::timeout(TRACE_WAIT, arrival).await;
        found = state.traces.since(since);
    }
    axum::Json(json!({ "live": state.server.is_some(), "traces": found })).into_response()
}

pub(super) async fn add_trace(Shared(state): SharedState, body: axum::body::Bytes) -> Response {
    let Ok(trace) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("expected a trace");
    };
    let places = {
        let state = state.clone();
        tokio::task::spawn_blocking(move || state.key_places())
            .await
            .unwrap_or_default()
    };
    let seq = state.traces.add(trace, &places);
    axum::Json(json!({ "seq": seq })).into_response()
}

/// Headers a replay does not copy: the connection's own, set again by the client.
/// The dev server's URL for a traced request's path and query; `None` when the path is
/// not a path of that server.
fn replay_url(server: &str, path: Option<&str>, query: Option<&str>) -> Option<reqwest::Url> {
    let base = reqwest::Url::parse(server).ok()?;
    let path = path?;
    if !path.starts_with('/') || path.starts_with("//") || path.contains(['\\', '#']) {
        return None;
    }
    let mut url = base.clone();
    url.set_path(path);
    url.set_query(query);
    (url.origin() == base.origin()).then_some(url)
}

const NOT_REPLAYED: &[&str] = &[
    "host",
    "content-length",
    "connection",
    "transfer-encoding",
    "keep-alive",
    "x-request-id",
];

pub(super) async fn replay(Shared(state): SharedState, UrlPath(seq): UrlPath<u64>) -> Response {
    let Some(server) = &state.server else {
        return error(
            StatusCode::CONFLICT,
            "no server runs here: replay works under `svc dev`",
        );
    };
    let Some(raw) = state.traces.raw(seq) else {
        return error(StatusCode::NOT_FOUND, "no such request (the oldest are dropped)");
    };
    if raw["body"]["cut"] == true {
        return error(
            StatusCode::CONFLICT,
            "the request's body was too large to keep; send it again yourself",
        );
    }
    let method = raw["method"]
        .as_str()
        .and_then(|m| m.parse::<reqwest::Method>().ok())
        .unwrap_or(reqwest::Method::GET);
    // Only to the dev server, whatever the trace says: its path must be a path (`/…`,
    // not `//host/…` nor `@host/…`), and the URL is built by the URL parser and checked
    // to have the server's origin, so the credentials it carries go back where they came
    // from and nowhere else.
    let Some(url) = replay_url(server, raw["path"].as_str(), raw["query"].as_str()) else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "this request's path is not one the dev server could have received; it is not sent",
        );
    };
    let Ok(client) = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
    else {
        return failed("cannot make an HTTP client");
    };
    let mut request = client.request(method, url);
    for pair in raw["headers"].as_array().into_iter().flatten() {
        let (Some(name), Some(value)) = (pair[0].as_str(), pair[1].as_str()) else {
            continue;
        };
        if !NOT_REPLAYED.contains(&name.to_ascii_lowercase().as_str()) {
            request = request.header(name, value);
        }
    }
    if let Some(text) = raw["body"]["text"].as_str() {
        request = request.body(text.to_string());
    }
    match request.send().await {
        Ok(response) => axum::Json(json!({ "status": response.status().as_u16() })).into_response(),
        Err(e) => error(StatusCode::BAD_GATEWAY, &format!("the dev server did not answer: {e}")),
    }
}

#[cfg(test)]
mod replay_tests {
    #[test]
    fn a_replay_goes_to_the_dev_server_only() {
        let server = "http://127.0.0.1:8080";
        let url = |path: &str, query: Option<&str>| super::replay_url(server, Some(path), query).map(|u| u.to_string());
        assert_eq!(url("/a/b", Some("x=1")).as_deref(), Some("http://127.0.0.1:8080/a/b?x=1"));
        for hostile in ["@127.0.0.1:19999/internal", "//evil.example/x", "evil.example/x", "/\\evil", "/a#b", ""] {
            assert_eq!(url(hostile, None), None, "{hostile}");
        }
        // A query cannot move it either.
        let moved = url("/a", Some("x=1#@evil.example")).unwrap();
        assert!(moved.starts_with("http://127.0.0.1:8080/a?"), "{moved}");
    }
}
