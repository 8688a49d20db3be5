//! Settings > API Keys: listed, created, revoked, rotated. A key is shown in the answer
//! that made it, and nowhere else.

use super::{Refused, SharedState, State, error, failed};
use axum::extract::{Path as UrlPath, State as Shared};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

pub(super) async fn list_keys(Shared(state): SharedState) -> Response {
    let store = match state.workspace.open_existing() {
        Ok(Ok(store)) => store,
        // No store yet: no keys.
        Ok(Err(_)) => return axum::Json(json!({ "keys": [], "store": state.workspace.describe() })).into_response(),
        Err(e) => return failed(e),
    };
    let now = svc_runtime::apikey::unix_now();
    match store.list_keys() {
        Ok(keys) => {
            let keys: Vec<Value> = keys.iter().map(|k| crate::keys::summary(k, now)).collect();
            axum::Json(json!({ "keys": keys, "store": state.workspace.describe() })).into_response()
        }
        Err(e) => failed(e),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct NewKey {
    name: String,
    owner: String,
    expires_in: Option<String>,
}

fn issued(issued: &crate::keys::Issued) -> Value {
    let now = svc_runtime::apikey::unix_now();
    json!({ "key": issued.key, "record": crate::keys::summary(&issued.record, now) })
}

/// A duration a person typed (`30d`, `12h`), or none when the field was left empty.
fn optional_duration(text: Option<&str>) -> Result<Option<i64>, Refused> {
    let text = text.filter(|d| !d.trim().is_empty());
    text.map(crate::workspace::parse_duration).transpose().map_err(Refused::bad)
}

/// The workspace store, which must exist already (a key to revoke or rotate is in it).
fn existing_store(state: &State) -> Result<Arc<dyn svc_runtime::store::WorkspaceStore>, Refused> {
    match state.workspace.open_existing() {
        Ok(Ok(store)) => Ok(store),
        Ok(Err(why)) => Err(Refused(StatusCode::NOT_FOUND, why)),
        Err(e) => Err(Refused::failed(e)),
    }
}

/// A key's answer: 201 with the key shown once, or why there is none.
fn key_answer(made: Result<Value, crate::keys::KeyError>) -> Response {
    match made {
        Ok(body) => (StatusCode::CREATED, axum::Json(body)).into_response(),
        Err(crate::keys::KeyError::Store(e)) => failed(e),
        Err(e) => error(StatusCode::CONFLICT, &e.to_string()),
    }
}

pub(super) async fn create_key(Shared(state): SharedState, body: axum::body::Bytes) -> Result<Response, Refused> {
    let new = serde_json::from_slice::<NewKey>(&body)
        .map_err(|_| Refused::bad("expected {\"name\": …, \"owner\": …, \"expiresIn\": \"30d\" (optional)}"))?;
    let lifetime = optional_duration(new.expires_in.as_deref())?;
    let store = state.workspace.open().map_err(Refused::failed)?;
    let made = crate::keys::create(store.as_ref(), new.name.trim(), new.owner.trim(), lifetime);
    Ok(key_answer(made.map(|new| issued(&new))))
}

pub(super) async fn revoke_key(Shared(state): SharedState, UrlPath(id): UrlPath<String>) -> Result<Response, Refused> {
    let store = existing_store(&state)?;
    let record = crate::keys::revoke(store.as_ref(), &id).map_err(|e| Refused(StatusCode::NOT_FOUND, e.to_string()))?;
    Ok(axum::Json(crate::keys::summary(&record, svc_runtime::apikey::unix_now())).into_response())
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct Rotate {
    grace: Option<String>,
}

pub(super) async fn rotate_key(
    Shared(state): SharedState,
    UrlPath(id): UrlPath<String>,
    body: axum::body::Bytes,
) -> Result<Response, Refused> {
    let rotate: Rotate = if body.is_empty() {
        Rotate::default()
    } else {
        serde_json::from_slice(&body).map_err(|_| Refused::bad("expected {\"grace\": \"1h\"} (optional)"))?
    };
    let grace = optional_duration(rotate.grace.as_deref())?;
    let store = existing_store(&state)?;
    let rotated = crate::keys::rotate(store.as_ref(), &id, grace, None).map(|rotation| {
        let mut body = issued(&rotation.issued);
        body["oldKey"] = json!(rotation.old.id);
        match rotation.retired {
            Ok(until) => body["oldKeyUntil"] = json!(until),
            Err(e) => body["warning"] = json!(format!("the old key could not be retired ({e}); revoke it")),
        }
        body
    });
    Ok(key_answer(rotated))
}
