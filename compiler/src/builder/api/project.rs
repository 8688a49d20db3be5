//! The project as the page reads it: its model, a route's generated code, and the checks
//! the inspector asks as the user types (an allowed origin, a setting).

use super::{SharedState, bad_request, error, failed};
use axum::extract::{Path as UrlPath, Query, State as Shared};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

pub(super) async fn project(Shared(state): SharedState) -> Response {
    let dir = state.dir.clone();
    match tokio::task::spawn_blocking(move || crate::builder::model::read(&dir)).await {
        Ok(model) => axum::Json(model).into_response(),
        Err(e) => failed(format!("reading the project failed: {e}")),
    }
}

/// How long a reading of the revision waits for a change before answering with the same
/// one (the page asks again), and how often it looks meanwhile: a stat of each watched
/// file and a read of the flows, well under a millisecond for a project of tens of files.
const REVISION_WAIT: Duration = Duration::from_secs(20);
const REVISION_POLL: Duration = Duration::from_millis(200);

#[derive(Deserialize)]
pub(super) struct AfterRevision {
    after: Option<String>,
}

/// `GET /api/project/revision?after=R`: the project's revision (`watch::revision`) once
/// it is not `R`, or `R` again after [`REVISION_WAIT`]; without `after`, at once. The
/// page long-polls it and reads `/api/project` only when it changed, instead of reading
/// and checking the whole project every few seconds.
pub(super) async fn revision(Shared(state): SharedState, Query(AfterRevision { after }): Query<AfterRevision>) -> Response {
    let deadline = tokio::time::Instant::now() + REVISION_WAIT;
    loop {
        let dir = state.dir.clone();
        let Ok(now) = tokio::task::spawn_blocking(move || crate::watch::revision(&dir)).await else {
            return failed("reading the project's files failed");
        };
        if after.as_deref() != Some(now.as_str()) || tokio::time::Instant::now() >= deadline {
            return axum::Json(json!({ "revision": now })).into_response();
        }
        tokio::time::sleep(REVISION_POLL).await;
    }
}

pub(super) async fn code(Shared(state): SharedState, UrlPath(route): UrlPath<String>) -> Response {
    let dir = state.dir.clone();
    match tokio::task::spawn_blocking(move || crate::builder::code::route_code(&dir, &route)).await {
        Ok(Ok(code)) => axum::Json(code).into_response(),
        Ok(Err(why)) => error(StatusCode::CONFLICT, &why),
        Err(e) => failed(format!("emitting failed: {e}")),
    }
}

#[derive(Deserialize)]
pub(super) struct OriginQuery {
    value: String,
}

/// One allowed origin, checked as `svc check` checks it: the Builder's form asks as the
/// user types.
pub(super) async fn check_origin(axum::extract::Query(q): axum::extract::Query<OriginQuery>) -> Response {
    match crate::check::flow::allowed_origin_problem(&q.value) {
        None => axum::Json(json!({ "ok": true })).into_response(),
        Some((message, _, hint)) => {
            axum::Json(json!({ "ok": false, "message": message, "hint": hint })).into_response()
        }
    }
}

#[derive(Deserialize)]
pub(super) struct SettingQuery {
    #[serde(rename = "type")]
    node_type: String,
    key: String,
    /// JSON: `60`, `"minute"`.
    value: String,
}

/// One setting of a built-in node, read as a flow reads it: the inspector's forms accept
/// what `svc check` accepts, and nothing else.
pub(super) async fn check_setting(axum::extract::Query(q): axum::extract::Query<SettingQuery>) -> Response {
    let Ok(value) = serde_json::from_str::<Value>(&q.value) else {
        return bad_request("`value` is a JSON value: 60, \"1m\"");
    };
    match svc_frontend::flow::setting_problem(&q.node_type, &q.key, &value) {
        None => axum::Json(json!({ "ok": true })).into_response(),
        Some((message, hint)) => axum::Json(json!({ "ok": false, "message": message, "hint": hint })).into_response(),
    }
}
