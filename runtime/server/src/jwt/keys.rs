//! The keys Check JWT verifies with: a JWK set given inline in the flow, or one a
//! provider publishes (its JWKS URL, or the one its OpenID Connect discovery document
//! names), fetched at start-up, refreshed in the background, and fetched again when a
//! token names a key the set does not have — at most once per [`UNKNOWN_KID_REFETCH`],
//! one fetch at a time, so a flood of made-up `kid`s cannot hammer the provider. While the
//! provider is down the last set fetched keeps working.

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long a fetched set is used when the provider says nothing (`Cache-Control`), and
/// the bounds of what it may say.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(600);
pub const MIN_REFRESH: Duration = Duration::from_secs(30);
pub const MAX_REFRESH: Duration = Duration::from_secs(24 * 3600);
/// A token naming an unknown key fetches the set again at most this often.
pub const UNKNOWN_KID_REFETCH: Duration = Duration::from_secs(5);
/// After a failed fetch, the next one waits this long, doubling up to [`MIN_REFRESH`]·10.
const RETRY_FIRST: Duration = Duration::from_secs(2);
/// A fetch's whole time, and the largest document read.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_DOCUMENT: usize = 512 * 1024;

/// One key of a set.
pub struct Key {
    kid: Option<String>,
    /// The JWK's `alg`, when it names one: the key is then used for that one only.
    alg: Option<Algorithm>,
    key: DecodingKey,
}

/// The keys a check may verify a token with.
#[derive(Default)]
pub struct KeySet {
    keys: Vec<Key>,
}

impl KeySet {
    /// The signature keys of a JWK set (`{"keys": [...]}`). A key for encryption
    /// (`use: enc`), of a type or curve svc does not verify with, or symmetric (`kty:
    /// oct`: a published set holds public keys; an HMAC secret comes only from `svc
    /// secrets`) is left out, not an error: providers publish such keys beside the ones
    /// they sign with.
    pub fn from_jwks(document: &[u8]) -> Result<KeySet, String> {
        #[derive(serde::Deserialize)]
        struct Set {
            keys: Vec<serde_json::Value>,
        }
        let set: Set = serde_json::from_slice(document).map_err(|e| format!("not a JWK set: {e}"))?;
        let mut keys = Vec::new();
        for value in set.keys {
            let Ok(jwk) = serde_json::from_value::<Jwk>(value) else {
                continue;
            };
            if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
                continue;
            }
            if matches!(
                jwk.algorithm,
                AlgorithmParameters::OctetKey(_) | AlgorithmParameters::Other(_)
            ) {
                continue;
            }
            let alg = match jwk.common.key_algorithm {
                None => None,
                Some(a) => match signing_algorithm(a) {
                    Some(a) => Some(a),
                    None => continue,
                },
            };
            let Ok(key) = DecodingKey::from_jwk(&jwk) else { continue };
            keys.push(Key {
                kid: jwk.common.key_id,
                alg,
                key,
            });
        }
        Ok(KeySet { keys })
    }

    /// A set of one HMAC secret (`secret:`, set with `svc secrets`); empty for an empty
    /// secret, which verifies nothing.
    pub fn secret(value: &[u8]) -> KeySet {
        let keys = DecodingKey::from_secret(value)
            .ok()
            .filter(|_| !value.is_empty())
            .map(|key| Key {
                kid: None,
                alg: None,
                key,
            });
        KeySet {
            keys: keys.into_iter().collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the set has a key named `kid`.
    pub fn has(&self, kid: &str) -> bool {
        self.keys.iter().any(|k| k.kid.as_deref() == Some(kid))
    }

    /// The keys a token signed with `alg` (naming `kid`, if it does) may have been signed
    /// with: of the algorithm's family, and of its algorithm when the key names one. With
    /// a `kid`, the key of that name, and keys that have none (a PEM key; as Envoy's
    /// `jwt_authn` tries them).
    pub fn candidates(&self, kid: Option<&str>, alg: Algorithm) -> impl Iterator<Item = &DecodingKey> {
        self.keys
            .iter()
            .filter(move |k| kid.is_none_or(|kid| k.kid.as_deref().is_none_or(|own| own == kid)))
            .filter(move |k| k.alg.is_none_or(|a| a == alg) && k.key.family() == alg.family())
            .map(|k| &k.key)
    }
}

/// A JWK's `alg`, if it is a signature algorithm svc verifies.
fn signing_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

/// Where a provider publishes its keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Published {
    /// An OpenID Connect discovery document (`<issuer>/.well-known/openid-configuration`),
    /// whose `issuer` must be this one and whose `jwks_uri` is fetched.
    Discovery { url: &'static str, issuer: &'static str },
    /// The JWK set itself.
    Jwks(&'static str),
}

impl Published {
    fn url(&self) -> &'static str {
        match self {
            Published::Discovery { url, .. } => url,
            Published::Jwks(url) => url,
        }
    }
}

/// A provider's published keys as this instance last fetched them.
pub struct RemoteKeys {
    from: Published,
    metrics: crate::metrics::StoreMetrics,
    current: RwLock<Option<Arc<KeySet>>>,
    /// When the last fetch began, successful or not (the unknown-`kid` throttle).
    last_fetch: Mutex<Option<Instant>>,
    /// One fetch at a time.
    fetching: tokio::sync::Mutex<()>,
    started: OnceLock<()>,
}

impl RemoteKeys {
    /// The keys published at `from`, one instance of them per process however many
    /// nodes read them; fetching starts with the first check that is built.
    pub fn shared(from: Published, metrics: &crate::metrics::StoreMetrics) -> Arc<RemoteKeys> {
        static ALL: OnceLock<Mutex<HashMap<Published, Arc<RemoteKeys>>>> = OnceLock::new();
        let keys = ALL
            .get_or_init(Default::default)
            .lock()
            .entry(from.clone())
            .or_insert_with(|| {
                Arc::new(RemoteKeys {
                    from,
                    metrics: metrics.clone(),
                    current: RwLock::new(None),
                    last_fetch: Mutex::new(None),
                    fetching: tokio::sync::Mutex::new(()),
                    started: OnceLock::new(),
                })
            })
            .clone();
        keys.start();
        keys
    }

    /// Starts fetching and refreshing in the background, once, when a Tokio runtime is
    /// there to run it (a server builds its routes inside one).
    fn start(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.started.set(()).is_err() {
            return;
        }
        let keys = Arc::downgrade(self);
        runtime.spawn(async move {
            let mut retry = RETRY_FIRST;
            loop {
                let Some(this) = keys.upgrade() else { return };
                let wait = match this.fetch_now().await {
                    Ok(fresh_for) => {
                        retry = RETRY_FIRST;
                        fresh_for
                    }
                    Err(()) => {
                        let wait = retry;
                        retry = (retry * 2).min(MIN_REFRESH * 10);
                        wait
                    }
                };
                drop(this);
                tokio::time::sleep(wait).await;
            }
        });
    }

    /// The set last fetched, if one ever was.
    pub fn current(&self) -> Option<Arc<KeySet>> {
        self.current.read().clone()
    }

    /// For a token naming a key the set does not have: the set fetched again, unless a
    /// fetch began less than [`UNKNOWN_KID_REFETCH`] ago (then the set as it is). Callers
    /// arriving during a fetch wait for it instead of starting another.
    pub async fn refetch_for_unknown(&self, kid: Option<&str>) -> Option<Arc<KeySet>> {
        let recent = |this: &Self| {
            this.last_fetch
                .lock()
                .is_some_and(|at| at.elapsed() < UNKNOWN_KID_REFETCH)
        };
        if recent(self) {
            return self.current();
        }
        let _one = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let known = |set: &Option<Arc<KeySet>>| match (set, kid) {
            (Some(set), Some(kid)) => set.has(kid),
            (Some(set), None) => !set.is_empty(),
            (None, _) => false,
        };
        if recent(self) || known(&self.current()) {
            return self.current();
        }
        let _ = self.fetch_holding_the_lock().await;
        self.current()
    }

    /// Fetches the set now (one fetch at a time): how long it is fresh for, or `Err`
    /// (logged; the set already held stays).
    async fn fetch_now(&self) -> Result<Duration, ()> {
        let _one = self.fetching.lock().await;
        self.fetch_holding_the_lock().await
    }

    async fn fetch_holding_the_lock(&self) -> Result<Duration, ()> {
        *self.last_fetch.lock() = Some(Instant::now());
        match fetch(&self.from).await {
            Ok((set, fresh_for)) => {
                tracing::info!(
                    keys_from = self.from.url(),
                    keys = set.len(),
                    "Check JWT: signing keys fetched"
                );
                *self.current.write() = Some(Arc::new(set));
                self.metrics.jwks_fetch("ok");
                Ok(fresh_for)
            }
            Err(problem) => {
                let held = self.current().map_or(0, |s| s.len());
                tracing::warn!(
                    keys_from = self.from.url(),
                    keys_held = held,
                    "Check JWT: cannot fetch the signing keys ({problem}); {}",
                    if held == 0 {
                        "tokens are refused until they are fetched"
                    } else {
                        "the keys fetched before are kept"
                    }
                );
                self.metrics.jwks_fetch("error");
                Err(())
            }
        }
    }
}

/// The HTTP client key fetches go through: TLS verified with the system's and the
/// bundled roots, no cookies, a few redirects.
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::limited(3))
            .timeout(FETCH_TIMEOUT)
            .user_agent(concat!("svc-runtime/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the HTTP client configuration is valid")
    })
}

/// Fetches a published set: the set, and how long it is fresh for.
async fn fetch(from: &Published) -> Result<(KeySet, Duration), String> {
    let jwks_url = match from {
        Published::Jwks(url) => url.to_string(),
        Published::Discovery { url, issuer } => {
            #[derive(serde::Deserialize)]
            struct Discovery {
                issuer: String,
                jwks_uri: String,
            }
            let (document, _) = get(url).await?;
            let found: Discovery = serde_json::from_slice(&document)
                .map_err(|e| format!("{url} is not an OpenID Connect discovery document: {e}"))?;
            // OpenID Connect Discovery 1.0, §4.3: the document is the issuer's own.
            if found.issuer != *issuer {
                return Err(format!(
                    "{url} is the discovery document of issuer `{}`, not `{issuer}`",
                    found.issuer
                ));
            }
            if !is_allowed_url(&found.jwks_uri) {
                return Err(format!(
                    "the discovery document's jwks_uri `{}` is not an https URL",
                    found.jwks_uri
                ));
            }
            found.jwks_uri
        }
    };
    let (document, fresh_for) = get(&jwks_url).await?;
    let set = KeySet::from_jwks(&document).map_err(|e| format!("{jwks_url}: {e}"))?;
    Ok((set, fresh_for))
}

pub use svc_types::builtin_nodes::jwt_url_allowed as is_allowed_url;

/// GETs a JSON document of at most [`MAX_DOCUMENT`] bytes: the body and how long it may
/// be kept (`Cache-Control: max-age`, within bounds).
async fn get(url: &str) -> Result<(Vec<u8>, Duration), String> {
    let mut response = client()
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("{url}: {}", without_url(&e)))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let fresh_for = response
        .headers()
        .get(reqwest::header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .and_then(max_age)
        .map_or(DEFAULT_REFRESH, |age| age.clamp(MIN_REFRESH, MAX_REFRESH));
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("{url}: {}", without_url(&e)))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(format!("{url} sent more than {} kB", MAX_DOCUMENT / 1024));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, fresh_for))
}

fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(&format!(" ({url})"), "");
    }
    text
}

/// `max-age` of a `Cache-Control` header (`no-store`/`no-cache` count as 0).
fn max_age(header: &str) -> Option<Duration> {
    header.split(',').map(str::trim).find_map(|directive| {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-store" || lower == "no-cache" {
            return Some(Duration::ZERO);
        }
        lower
            .strip_prefix("max-age=")
            .and_then(|n| n.trim_matches('"').parse::<u64>().ok())
            .map(Duration::from_secs)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_age_is_read_and_no_store_is_zero() {
        assert_eq!(max_age("public, max-age=3600"), Some(Duration::from_secs(3600)));
        assert_eq!(max_age("no-store"), Some(Duration::ZERO));
        assert_eq!(max_age("public"), None);
    }

    #[test]
    fn only_https_or_loopback_http_is_fetched() {
        assert!(is_allowed_url("https://id.example.com/jwks"));
        assert!(is_allowed_url("http://127.0.0.1:8080/jwks"));
        assert!(is_allowed_url("http://localhost/jwks"));
        assert!(!is_allowed_url("http://id.example.com/jwks"));
        assert!(!is_allowed_url("file:///etc/passwd"));
    }

    #[test]
    fn a_set_keeps_its_signature_keys_and_leaves_out_the_others() {
        let set = KeySet::from_jwks(
            br#"{"keys": [
                {"kty": "EC", "crv": "P-256", "kid": "ec", "use": "sig",
                 "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
                {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
                {"kty": "EC", "crv": "P-256", "kid": "enc", "use": "enc",
                 "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
                {"kty": "XYZ", "kid": "unknown"}
            ]}"#,
        )
        .unwrap();
        assert_eq!(set.len(), 1);
        assert!(set.has("ec") && !set.has("secret") && !set.has("enc"));
        assert_eq!(set.candidates(Some("ec"), Algorithm::ES256).count(), 1);
        // An EC key is never a candidate for RSA or HMAC.
        assert_eq!(set.candidates(Some("ec"), Algorithm::RS256).count(), 0);
        assert_eq!(set.candidates(None, Algorithm::HS256).count(), 0);
        assert!(KeySet::from_jwks(b"[]").is_err());
    }
}
