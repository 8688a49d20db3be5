//! The key `svc test` signs its token fixtures with: a P-256 key made for one run, whose
//! public half the test server verifies with (`SVC_TEST_JWKS`, read in test mode only).
//! Never used by a deployed server.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};

/// An ES256 key for one test run.
pub struct TestSigner {
    key: EcdsaKeyPair,
    rng: SystemRandom,
}

/// The `kid` of the test key.
const KID: &str = "svc-test";

impl TestSigner {
    pub fn new() -> TestSigner {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("the system's random source works");
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .expect("a key just made reads");
        TestSigner { key, rng }
    }

    /// The JWK set of its public key, as the test server is given it.
    pub fn jwks(&self) -> String {
        // An uncompressed point: 0x04, then x and y (32 bytes each).
        let point = self.key.public_key().as_ref();
        let (x, y) = point[1..].split_at(32);
        serde_json::json!({ "keys": [{
            "kty": "EC", "crv": "P-256", "kid": KID, "use": "sig", "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y),
        }]})
        .to_string()
    }

    /// A token of `claims`, signed.
    pub fn sign(&self, claims: &serde_json::Value) -> String {
        let header = serde_json::json!({ "alg": "ES256", "typ": "JWT", "kid": KID });
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .key
            .sign(&self.rng, input.as_bytes())
            .expect("signing with a valid key");
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }
}

impl Default for TestSigner {
    fn default() -> Self {
        TestSigner::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jwt::{JwtCheck, JwtSettings, KeySource, NoClaims};

    #[tokio::test]
    async fn a_token_it_signs_passes_the_check_it_configures() {
        let signer = TestSigner::new();
        let jwks: &'static str = Box::leak(signer.jwks().into_boxed_str());
        let check = JwtCheck::for_tests(
            JwtSettings {
                issuer: "https://id.example.com/",
                audiences: &["api"],
                algorithms: &["RS256"],
                leeway: 0,
                required_scopes: &["read"],
                required_claims: &[],
                claim_fields: &[],
                keys: KeySource::Discovery("https://id.example.com/.well-known/openid-configuration"),
            },
            jwks,
        );
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let claims = serde_json::json!({ "iss": "https://id.example.com/", "aud": "api", "sub": "alice", "exp": now + 60, "scope": "read" });
        let host = crate::runtime::RuntimeHost::new(Default::default(), Default::default());
        let verified = check
            .verify::<NoClaims>(signer.sign(&claims).as_bytes(), &host)
            .await
            .unwrap();
        assert_eq!(verified.subject, "alice");
        let other = TestSigner::new();
        assert!(
            check
                .verify::<NoClaims>(other.sign(&claims).as_bytes(), &host)
                .await
                .is_err()
        );
    }
}
