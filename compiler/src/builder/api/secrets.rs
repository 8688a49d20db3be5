//! Settings > Secrets: the declared secrets, set or missing (never a value), and setting
//! one (sealed at once).

use super::{SharedState, State, bad_request, error, failed};
use axum::extract::{Path as UrlPath, State as Shared};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

/// The secrets the project declares, in its config (YAML or TypeScript).
fn declared_secrets(state: &State) -> Vec<svc_types::assets::SecretDefinition> {
    state.config()
        .map(|c| c.assets.secrets)
        .unwrap_or_default()
}

pub(super) async fn list_secrets(Shared(state): SharedState) -> Response {
    let declared = declared_secrets(&state);
    let set = match state.workspace.open_existing() {
        Ok(Ok(store)) => match store.list_secrets() {
            Ok(set) => set,
            Err(e) => return failed(e),
        },
        Ok(Err(_)) => Vec::new(),
        Err(e) => return failed(e),
    };
    let rows: Vec<Value> = declared
        .iter()
        .map(|d| {
            let stored = set.iter().find(|s| s.name == d.name);
            json!({
                "name": d.name,
                "required": d.required,
                "description": d.description,
                "set": stored.is_some(),
                "updatedAt": stored.map(|s| s.updated_at),
            })
        })
        .collect();
    axum::Json(json!({ "secrets": rows, "store": state.workspace.describe() })).into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SecretValue {
    value: String,
}

pub(super) async fn set_secret(Shared(state): SharedState, UrlPath(name): UrlPath<String>, body: axum::body::Bytes) -> Response {
    let Ok(SecretValue { value }) = serde_json::from_slice::<SecretValue>(&body) else {
        return bad_request("expected {\"value\": …}");
    };
    if value.is_empty() {
        return bad_request("the value is empty; nothing was set");
    }
    if !declared_secrets(&state).iter().any(|d| d.name == name) {
        return error(
            StatusCode::NOT_FOUND,
            "the project declares no secret of that name (declare it in the config first)",
        );
    }
    let result = (|| -> Result<(), String> {
        let store = state.workspace.open()?;
        let (key, _) = state.workspace.require_secrets_key(true)?;
        svc_runtime::secrets::prepare_store(store.as_ref(), &key)?;
        store
            .set_secret(&name, &key.seal(&name, &value), svc_runtime::apikey::unix_now())
            .map_err(|e| e.to_string())
    })();
    match result {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => failed(e),
    }
}
