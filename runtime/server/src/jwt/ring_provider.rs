//! `jsonwebtoken`'s signature checks done by `ring`, the library every svc server
//! already links for TLS (rustls): no second cryptography library in the build, and no
//! C toolchain (docs/decisions.md, "Check JWT: which JOSE crate"). This file only maps a
//! JOSE algorithm to `ring`'s verification algorithm; parsing, the algorithm allow-list
//! and the claims' checks are `jsonwebtoken`'s, the arithmetic `ring`'s.
//!
//! Verification only: svc never signs a token in a server (`svc test` mints its test
//! tokens elsewhere), so the signer factory refuses every algorithm.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind};
use jsonwebtoken::signature;
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::signature::{self as sig, RsaParameters, VerificationAlgorithm};

/// The provider svc installs (once per process, before the first check).
pub static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: no_signer,
    verifier_factory: verifier,
    key_utils: KeyUtils::new_unimplemented(),
};

/// Installs [`PROVIDER`] unless one is installed (by an earlier call, or a test).
pub fn install() {
    let _ = PROVIDER.install_default();
}

fn no_signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
    Err(ErrorKind::Provider("svc's servers verify tokens and never sign one".into()).into())
}

fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
    // The key's family must be the algorithm's: an RSA public key is never an HMAC secret
    // (the algorithm-confusion attack), an EC key never an RSA one.
    if key.family() != algorithm.family() {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    let public = match algorithm {
        Algorithm::RS256 => Public::Rsa(&sig::RSA_PKCS1_2048_8192_SHA256),
        Algorithm::RS384 => Public::Rsa(&sig::RSA_PKCS1_2048_8192_SHA384),
        Algorithm::RS512 => Public::Rsa(&sig::RSA_PKCS1_2048_8192_SHA512),
        Algorithm::PS256 => Public::Rsa(&sig::RSA_PSS_2048_8192_SHA256),
        Algorithm::PS384 => Public::Rsa(&sig::RSA_PSS_2048_8192_SHA384),
        Algorithm::PS512 => Public::Rsa(&sig::RSA_PSS_2048_8192_SHA512),
        Algorithm::ES256 => Public::Point(&sig::ECDSA_P256_SHA256_FIXED),
        Algorithm::ES384 => Public::Point(&sig::ECDSA_P384_SHA384_FIXED),
        Algorithm::EdDSA => Public::Point(&sig::ED25519),
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
            let hmac = match algorithm {
                Algorithm::HS384 => ring::hmac::HMAC_SHA384,
                Algorithm::HS512 => ring::hmac::HMAC_SHA512,
                _ => ring::hmac::HMAC_SHA256,
            };
            return Ok(Box::new(HmacVerifier {
                algorithm: *algorithm,
                key: ring::hmac::Key::new(hmac, key.try_get_as_bytes()?),
            }));
        }
        _ => return Err(ErrorKind::UnsupportedAlgorithm.into()),
    };
    Ok(Box::new(PublicKeyVerifier {
        algorithm: *algorithm,
        public,
        key: key.clone(),
    }))
}

/// How `ring` reads a public key of the algorithm's family.
enum Public {
    /// RSA, from a JWK's modulus and exponent or from DER.
    Rsa(&'static RsaParameters),
    /// An EC point (`04 || x || y`) or an Ed25519 key's 32 bytes.
    Point(&'static dyn VerificationAlgorithm),
}

struct PublicKeyVerifier {
    algorithm: Algorithm,
    public: Public,
    key: DecodingKey,
}

impl signature::Verifier<Vec<u8>> for PublicKeyVerifier {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
        let checked = match (&self.public, self.key.kind()) {
            (Public::Rsa(rsa), DecodingKeyKind::RsaModulusExponent { n, e }) => {
                sig::RsaPublicKeyComponents { n, e }.verify(rsa, message, signature)
            }
            (Public::Rsa(rsa), DecodingKeyKind::SecretOrDer(der)) => {
                sig::UnparsedPublicKey::new(*rsa, der).verify(message, signature)
            }
            (Public::Point(algorithm), DecodingKeyKind::SecretOrDer(point)) => {
                sig::UnparsedPublicKey::new(*algorithm, point).verify(message, signature)
            }
            (Public::Point(_), DecodingKeyKind::RsaModulusExponent { .. }) => return Err(signature::Error::new()),
        };
        checked.map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for PublicKeyVerifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

struct HmacVerifier {
    algorithm: Algorithm,
    key: ring::hmac::Key,
}

impl signature::Verifier<Vec<u8>> for HmacVerifier {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
        // In constant time.
        ring::hmac::verify(&self.key, message, signature).map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for HmacVerifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}
