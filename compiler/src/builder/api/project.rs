//! The project as the page reads it: its model, a route's generated code, and the checks
//! the inspector asks as the user types (an allowed origin, a setting).

use super::{SharedState, bad_request, error, failed};
use axum::extract::{Path as UrlPath, State as Shared};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

pub(super) async fn project(Shared(state): SharedState) -> Response {
    let dir = state.dir.clone();
    match tokio::task::spawn_blocking(move || crate::builder::model::read(&dir)).await {
        Ok(model) => axum::Json(model).into_response(),
        Err(e) => failed(format!("reading the project failed: {e}")),
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
