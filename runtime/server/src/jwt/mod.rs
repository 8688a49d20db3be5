//! Check JWT: a bearer token an identity provider issued, verified against the keys it
//! publishes (or inline keys, or an HMAC secret set with `svc secrets`), its issuer,
//! audience, lifetime, scopes and required claims checked.
//!
//! Parsing and the claims' checks are `jsonwebtoken`'s, the signature arithmetic
//! `ring`'s ([`ring_provider`]); the keys' fetching and caching are svc's ([`keys`]).
//! What is never done: a token's `jku`, `x5u`, `x5c` or `jwk` header is never followed
//! or trusted, its `kid` only names a key of the configured set, `alg: none` and an
//! algorithm outside the node's list are refused before any key is looked at, and an
//! HMAC algorithm never verifies with a published (public) key.

mod keys;
mod ring_provider;
mod test_signer;
mod verified;

pub use keys::{KeySet, Published, RemoteKeys, is_allowed_url};
pub use test_signer::TestSigner;

use crate::apikey::KeyLocation;
use crate::metrics::NodeCounters;
use http::HeaderValue;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde::de::DeserializeOwned;
use std::sync::Arc;
use svc_sdk::Host;

/// The claims of a node that reads none (no `claims:` structure).
pub type NoClaims = serde::de::IgnoredAny;

/// The longest token looked at (bytes): a longer one is refused before it is decoded.
pub const MAX_TOKEN: usize = 16 * 1024;

/// What a flow's Check JWT node says (generated code builds one per node, at start-up).
#[derive(Debug, Clone, Copy)]
pub struct JwtSettings {
    /// The `iss` a token must carry.
    pub issuer: &'static str,
    /// A token's `aud` must name one of these.
    pub audiences: &'static [&'static str],
    /// The algorithms accepted (JOSE names, `RS256`); the compiler checked each.
    pub algorithms: &'static [&'static str],
    /// Clock skew allowed on `exp` and `nbf`, in seconds.
    pub leeway: u64,
    /// Each must be in the token's `scope` (space-separated) or `scp` claim.
    pub required_scopes: &'static [&'static str],
    /// Each must be present (and not `null`) in the token.
    pub required_claims: &'static [&'static str],
    /// The fields of the node's claims structure: the claims read into it (a structure
    /// refuses fields it does not declare, and a token carries many).
    pub claim_fields: &'static [&'static str],
    pub keys: KeySource,
}

/// Where a check's keys come from.
#[derive(Debug, Clone, Copy)]
pub enum KeySource {
    /// The issuer's OpenID Connect discovery document at this URL.
    Discovery(&'static str),
    /// A JWK set at this URL.
    JwksUrl(&'static str),
    /// A JWK set given in the flow (JSON text).
    Inline(&'static str),
    /// An HMAC secret: the value of this secret (`svc secrets set`).
    Secret(&'static str),
}

/// One Check JWT node's verifier, built once at start-up.
pub struct JwtCheck {
    /// One `Validation` per accepted algorithm (`jsonwebtoken` checks a key against every
    /// algorithm of a validation, so each holds one).
    validations: Vec<(Algorithm, Validation)>,
    required_scopes: &'static [&'static str],
    required_claims: &'static [&'static str],
    claim_fields: &'static [&'static str],
    keys: Keys,
    leeway: u64,
    /// Tokens this node verified, remembered until they expire ([`verified`]).
    verified: verified::VerifiedTokens,
}

enum Keys {
    Inline(KeySet),
    Remote(Arc<RemoteKeys>),
    Secret(&'static str),
}

/// A token that held: its subject and its claims, read as the node's claims structure.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified<C> {
    pub subject: String,
    pub claims: C,
}

/// Why a token was refused. Logged at debug level by name; the token never is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No token where the node reads it (or more than one).
    Missing,
    /// Not three base64url parts, too long, or a header or claims that are not JSON.
    Malformed,
    /// `alg` not in the node's list (`none` never is).
    Algorithm,
    /// No key of the set has the token's `kid`, or fits its algorithm.
    UnknownKey,
    /// No key was ever fetched (the provider has not answered since start-up), or the
    /// secret is not set.
    NoKeys,
    BadSignature,
    Expired,
    NotYetValid,
    WrongIssuer,
    WrongAudience,
    /// `exp`, `iss`, `aud` or `sub` missing, or a required claim, or a claim twice.
    MissingClaim,
    /// The claims do not fit the node's claims structure.
    ClaimsDoNotFit,
    /// A required scope is not granted (RFC 6750's `insufficient_scope`).
    InsufficientScope,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Missing => "missing",
            Refusal::Malformed => "malformed",
            Refusal::Algorithm => "algorithm not accepted",
            Refusal::UnknownKey => "unknown key",
            Refusal::NoKeys => "no signing keys",
            Refusal::BadSignature => "bad signature",
            Refusal::Expired => "expired",
            Refusal::NotYetValid => "not yet valid",
            Refusal::WrongIssuer => "wrong issuer",
            Refusal::WrongAudience => "wrong audience",
            Refusal::MissingClaim => "missing claim",
            Refusal::ClaimsDoNotFit => "claims do not fit",
            Refusal::InsufficientScope => "insufficient scope",
        }
    }

    /// The `WWW-Authenticate` challenge (RFC 6750 §3): no error code when no token was
    /// presented, `insufficient_scope` with the scopes needed, else `invalid_token`.
    pub fn challenge(self, realm: &str, scopes: &[&str]) -> String {
        match self {
            Refusal::Missing => format!("Bearer realm=\"{realm}\""),
            Refusal::InsufficientScope => {
                format!(
                    "Bearer realm=\"{realm}\", error=\"insufficient_scope\", scope=\"{}\"",
                    scopes.join(" ")
                )
            }
            _ => format!("Bearer realm=\"{realm}\", error=\"invalid_token\""),
        }
    }

    fn of(e: &jsonwebtoken::errors::Error) -> Refusal {
        match e.kind() {
            ErrorKind::InvalidSignature => Refusal::BadSignature,
            ErrorKind::ExpiredSignature => Refusal::Expired,
            ErrorKind::ImmatureSignature => Refusal::NotYetValid,
            ErrorKind::InvalidIssuer => Refusal::WrongIssuer,
            ErrorKind::InvalidAudience => Refusal::WrongAudience,
            ErrorKind::MissingRequiredClaim(_) => Refusal::MissingClaim,
            ErrorKind::InvalidAlgorithm
            | ErrorKind::MissingAlgorithm
            | ErrorKind::InvalidAlgorithmName
            | ErrorKind::UnsupportedAlgorithm => Refusal::Algorithm,
            ErrorKind::InvalidKeyFormat
            | ErrorKind::InvalidRsaKey(_)
            | ErrorKind::InvalidEcdsaKey
            | ErrorKind::InvalidEddsaKey => Refusal::UnknownKey,
            _ => Refusal::Malformed,
        }
    }
}

impl crate::app::RouteConfig<'_> {
    /// The verifier of a Check JWT node; its provider's keys start being fetched now.
    pub fn jwt_check(&self, settings: JwtSettings) -> JwtCheck {
        match self.test_jwks {
            Some(test_jwks) => JwtCheck::for_tests(settings, test_jwks),
            None => JwtCheck::new(settings, &self.metrics.stores),
        }
    }
}

impl crate::Exchange<'_> {
    /// Check JWT: the token's subject and claims for `valid`, or why it was refused (a
    /// later 401, or a 403 for [`Refusal::InsufficientScope`], then carries RFC 6750's
    /// `WWW-Authenticate: Bearer` challenge). The reason is logged at debug level, never
    /// the token.
    pub async fn check_jwt<C: serde::de::DeserializeOwned>(
        &mut self,
        node: &NodeCounters,
        check: &JwtCheck,
        location: &KeyLocation,
    ) -> Result<Verified<C>, Refusal> {
        self.hide_credential(location);
        let verified = match location.extract(&self.headers, self.uri.query()) {
            Some(token) => check.verify::<C>(&token, &*self.rt.host).await,
            None => Err(Refusal::Missing),
        };
        match verified {
            Ok(v) => {
                self.step(node, true, "valid");
                Ok(v)
            }
            Err(refusal) => {
                tracing::debug!(request_id = %self.request_id, route = self.route, node = node.node(), reason = refusal.as_str(), "token refused");
                self.challenge =
                    HeaderValue::from_str(&refusal.challenge(&self.rt.realm, check.required_scopes())).ok();
                self.challenge_on_forbidden = refusal == Refusal::InsufficientScope;
                self.refused_token = true;
                if refusal == Refusal::InsufficientScope {
                    node.failed_other();
                    self.record_step(node, "forbidden");
                } else {
                    self.step(node, false, "invalid");
                }
                Err(refusal)
            }
        }
    }
}

impl JwtCheck {
    /// The verifier of `settings`; a remote key set starts being fetched now (shared with
    /// every other node reading the same URL).
    pub fn new(settings: JwtSettings, metrics: &crate::metrics::StoreMetrics) -> JwtCheck {
        ring_provider::install();
        let validations = settings
            .algorithms
            .iter()
            .filter_map(|name| name.parse::<Algorithm>().ok())
            .filter(|alg| {
                // HMAC only with a secret; a published set never verifies one.
                matches!(settings.keys, KeySource::Secret(_))
                    == matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
            })
            .map(|alg| {
                let mut v = Validation::new(alg);
                v.leeway = settings.leeway;
                v.validate_exp = true;
                v.validate_nbf = true;
                v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
                v.set_issuer(&[settings.issuer]);
                v.set_audience(settings.audiences);
                (alg, v)
            })
            .collect();
        let keys = match settings.keys {
            KeySource::Inline(jwks) => Keys::Inline(KeySet::from_jwks(jwks.as_bytes()).unwrap_or_else(|e| {
                tracing::error!("Check JWT: the inline key set cannot be read ({e}); every token is refused");
                KeySet::default()
            })),
            KeySource::Secret(name) => Keys::Secret(name),
            KeySource::JwksUrl(url) => Keys::Remote(RemoteKeys::shared(Published::Jwks(url), metrics)),
            KeySource::Discovery(url) => Keys::Remote(RemoteKeys::shared(
                Published::Discovery {
                    url,
                    issuer: settings.issuer,
                },
                metrics,
            )),
        };
        JwtCheck {
            validations,
            required_scopes: settings.required_scopes,
            required_claims: settings.required_claims,
            claim_fields: settings.claim_fields,
            keys,
            leeway: settings.leeway,
            verified: Default::default(),
        }
    }

    /// The verifier `svc test` runs: the node's checks, with the test key's set `jwks`
    /// (ES256, which `svc test` signs with) in place of the node's keys and algorithms.
    pub fn for_tests(settings: JwtSettings, jwks: &'static str) -> JwtCheck {
        JwtCheck::new(
            JwtSettings {
                algorithms: &["ES256"],
                keys: KeySource::Inline(jwks),
                ..settings
            },
            &crate::metrics::StoreMetrics::default(),
        )
    }

    /// The scopes a token must have (for the challenge of a refusal).
    pub fn required_scopes(&self) -> &'static [&'static str] {
        self.required_scopes
    }

    /// Verifies `token`: its subject and its claims read as `C` (`serde::de::IgnoredAny`
    /// when the node declares no claims structure).
    pub async fn verify<C: DeserializeOwned>(&self, token: &[u8], host: &dyn Host) -> Result<Verified<C>, Refusal> {
        let token = well_formed(token).ok_or(Refusal::Malformed)?;
        // A token this node verified before, with the keys it still holds.
        let held = match &self.keys {
            Keys::Remote(remote) => remote.current(),
            Keys::Inline(_) | Keys::Secret(_) => None,
        };
        let key_set = match (&self.keys, &held) {
            (Keys::Inline(set), _) => Some(set as *const KeySet as usize),
            (Keys::Remote(_), Some(set)) => Some(Arc::as_ptr(set) as usize),
            _ => None,
        };
        let mac = key_set.map(|_| self.verified.mac(token.as_bytes()));
        if let (Some(key_set), Some(mac)) = (key_set, mac)
            && let Some(known) = self
                .verified
                .get(mac, jsonwebtoken::get_current_timestamp(), self.leeway, key_set)
        {
            return read_claims(known.subject, known.claims);
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| Refusal::Malformed)?;
        let (alg, validation) = self
            .validations
            .iter()
            .find(|(alg, _)| *alg == header.alg)
            .ok_or(Refusal::Algorithm)?;
        let kid = header.kid.as_deref();
        let (claims, verified_with) = match &self.keys {
            Keys::Inline(set) => (
                verify_with(set, token, kid, *alg, validation)?,
                Some(set as *const KeySet as usize),
            ),
            Keys::Secret(name) => {
                let secret = host.secret(name).ok_or(Refusal::NoKeys)?;
                let set = KeySet::secret(secret.expose().as_bytes());
                if set.is_empty() {
                    return Err(Refusal::NoKeys);
                }
                // Not remembered: the secret may be set anew.
                (verify_with(&set, token, kid, *alg, validation)?, None)
            }
            Keys::Remote(remote) => {
                let knows = |set: &KeySet| set.candidates(kid, *alg).next().is_some();
                let set = match held {
                    Some(set) if knows(&set) => set,
                    // A `kid` the set does not have: maybe the provider rotated its keys.
                    _ => match remote.refetch_for_unknown(kid).await {
                        Some(set) if knows(&set) => set,
                        Some(set) if !set.is_empty() => return Err(Refusal::UnknownKey),
                        _ => return Err(Refusal::NoKeys),
                    },
                };
                (
                    verify_with(&set, token, kid, *alg, validation)?,
                    Some(Arc::as_ptr(&set) as usize),
                )
            }
        };
        let expires = claims.get("exp").and_then(serde_json::Value::as_u64);
        let not_before = claims.get("nbf").and_then(serde_json::Value::as_u64);
        let (subject, declared) = self.finish(claims)?;
        if let (Some(key_set), Some(expires)) = (verified_with, expires) {
            let mac = mac.unwrap_or_else(|| self.verified.mac(token.as_bytes()));
            self.verified.remember(
                mac,
                verified::Remembered {
                    subject: subject.clone(),
                    claims: declared.clone(),
                    expires,
                    not_before,
                    key_set,
                },
            );
        }
        read_claims(subject, declared)
    }

    /// The checks after the signature and the registered claims: `sub`, scopes, required
    /// claims; the subject, and the claims the node's structure reads.
    fn finish(
        &self,
        claims: serde_json::Map<String, serde_json::Value>,
    ) -> Result<(String, serde_json::Map<String, serde_json::Value>), Refusal> {
        let Some(serde_json::Value::String(subject)) = claims.get("sub") else {
            return Err(Refusal::MissingClaim);
        };
        let subject = subject.clone();
        if !self.required_scopes.is_empty() {
            let granted = granted_scopes(&claims);
            if !self.required_scopes.iter().all(|s| granted.contains(s)) {
                return Err(Refusal::InsufficientScope);
            }
        }
        if self
            .required_claims
            .iter()
            .any(|name| claims.get(*name).is_none_or(serde_json::Value::is_null))
        {
            return Err(Refusal::MissingClaim);
        }
        let declared = self
            .claim_fields
            .iter()
            .filter_map(|name| claims.get(*name).map(|v| (name.to_string(), v.clone())))
            .collect();
        Ok((subject, declared))
    }
}

/// The claims read as the node's structure `C`.
fn read_claims<C: DeserializeOwned>(
    subject: String,
    declared: serde_json::Map<String, serde_json::Value>,
) -> Result<Verified<C>, Refusal> {
    let claims = C::deserialize(&serde_json::Value::Object(declared)).map_err(|_| Refusal::ClaimsDoNotFit)?;
    Ok(Verified { subject, claims })
}

/// The token as text, if it is three non-empty base64url parts (no padding, no other
/// character) of at most [`MAX_TOKEN`] bytes.
fn well_formed(token: &[u8]) -> Option<&str> {
    if token.len() > MAX_TOKEN {
        return None;
    }
    let mut parts = 0;
    for part in token.split(|&b| b == b'.') {
        parts += 1;
        if part.is_empty()
            || !part
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_')
        {
            return None;
        }
    }
    if parts != 3 {
        return None;
    }
    std::str::from_utf8(token).ok()
}

/// Verifies with each key the token may have been signed with, until one holds: the
/// claims, or why the last refused. Only a bad signature tries the next key.
fn verify_with(
    set: &KeySet,
    token: &str,
    kid: Option<&str>,
    alg: Algorithm,
    validation: &Validation,
) -> Result<serde_json::Map<String, serde_json::Value>, Refusal> {
    let mut refusal = Refusal::UnknownKey;
    for key in set.candidates(kid, alg) {
        match jsonwebtoken::decode::<UniqueClaims>(token, key, validation) {
            Ok(data) => return Ok(data.claims.0),
            Err(e) => {
                refusal = Refusal::of(&e);
                if refusal != Refusal::BadSignature {
                    // A claim given twice is a JSON error to the decoder: say so.
                    if matches!(e.kind(), ErrorKind::Json(j) if j.to_string().starts_with("duplicate")) {
                        return Err(Refusal::MissingClaim);
                    }
                    return Err(refusal);
                }
            }
        }
    }
    Err(refusal)
}

/// The scopes a token grants: its `scope` (space-separated, RFC 8693) and `scp` (a
/// string or an array: Okta, Entra ID).
fn granted_scopes(claims: &serde_json::Map<String, serde_json::Value>) -> Vec<&str> {
    let mut granted = Vec::new();
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(serde_json::Value::String(s)) => granted.extend(s.split_ascii_whitespace()),
            Some(serde_json::Value::Array(items)) => granted.extend(items.iter().filter_map(|v| v.as_str())),
            _ => {}
        }
    }
    granted
}

/// A token's claims, refused when one name appears twice: JSON lets a parser keep either
/// value, and a token whose `sub` reads one way here and another way elsewhere is an
/// attack, not a token.
struct UniqueClaims(serde_json::Map<String, serde_json::Value>);

impl<'de> serde::Deserialize<'de> for UniqueClaims {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Claims;
        impl<'de> serde::de::Visitor<'de> for Claims {
            type Value = UniqueClaims;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object of claims")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueClaims, A::Error> {
                let mut claims = serde_json::Map::new();
                while let Some((name, value)) = map.next_entry::<String, serde_json::Value>()? {
                    if claims.contains_key(&name) {
                        return Err(serde::de::Error::custom(format_args!("duplicate claim `{name}`")));
                    }
                    claims.insert(name, value);
                }
                Ok(UniqueClaims(claims))
            }
        }
        deserializer.deserialize_map(Claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_three_base64url_parts_are_well_formed() {
        assert!(well_formed(b"eyJh.eyJz.c2ln").is_some());
        for bad in [
            &b"eyJh.eyJz"[..],
            b"eyJh.eyJz.c2ln.x",
            b"eyJh..c2ln",
            b"eyJh.eyJz.c2ln=",
            b"eyJh.ey+z.c2ln",
            b"eyJh.eyJz.c2 n",
        ] {
            assert!(well_formed(bad).is_none(), "{}", String::from_utf8_lossy(bad));
        }
        assert!(well_formed(&vec![b'a'; MAX_TOKEN + 1]).is_none());
    }

    #[test]
    fn scopes_are_read_from_scope_and_scp() {
        let claims: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"scope": "read  write", "scp": ["admin"]}"#).unwrap();
        assert_eq!(granted_scopes(&claims), ["read", "write", "admin"]);
    }

    #[test]
    fn a_claim_given_twice_is_refused() {
        let err = serde_json::from_str::<UniqueClaims>(r#"{"sub": "a", "sub": "b"}"#)
            .err()
            .unwrap();
        assert!(err.to_string().starts_with("duplicate claim `sub`"), "{err}");
    }
}
