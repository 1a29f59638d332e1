//! Cost per request of verifying a bearer JWT with a cached key: what the `auth` layer adds
//! to every request (header decode, key lookup by `kid`, signature, claims).
//!
//! `cargo bench --bench auth --features auth`. Figures are recorded in
//! `docs/contributing/performance-lab-notes.md`.

use std::hint::black_box;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mrtr::server::http::auth::{JwkSet, ResourceServer, TokenVerifier};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use serde_json::json;

const RESOURCE: &str = "https://mcp.example.com/mcp";
const ISSUER: &str = "https://auth.example.com";

fn claims() -> serde_json::Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    json!({"iss": ISSUER, "sub": "alice", "aud": RESOURCE, "scope": "read deploy", "iat": now, "exp": now + 3600})
}

/// An ES256 key: its JWK and a token it signed.
fn es256() -> (serde_json::Value, String) {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let point = pair.public_key().as_ref();
    let jwk = json!({"kty": "EC", "crv": "P-256", "kid": "es", "alg": "ES256",
        "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])});
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("es".into());
    let token = jsonwebtoken::encode(
        &header,
        &claims(),
        &EncodingKey::from_ec_der(pkcs8.as_ref()),
    )
    .unwrap();
    (jwk, token)
}

/// An Ed25519 key: its JWK and a token it signed.
fn eddsa() -> (serde_json::Value, String) {
    let rng = SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let jwk = json!({"kty": "OKP", "crv": "Ed25519", "kid": "ed", "alg": "EdDSA",
        "x": B64.encode(pair.public_key().as_ref())});
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some("ed".into());
    let token = jsonwebtoken::encode(
        &header,
        &claims(),
        &EncodingKey::from_ed_der(pkcs8.as_ref()),
    )
    .unwrap();
    (jwk, token)
}

fn verify(c: &mut Criterion) {
    let (es_jwk, es_token) = es256();
    let (ed_jwk, ed_token) = eddsa();
    let keys: JwkSet = serde_json::from_value(json!({"keys": [es_jwk, ed_jwk]})).unwrap();
    let verifier: Arc<dyn TokenVerifier> = ResourceServer::new(RESOURCE.parse().unwrap())
        .authorization_server(ISSUER)
        .jwks(keys)
        .token_verifier();
    let mut group = c.benchmark_group("verify_bearer");
    for (name, token) in [("ES256", &es_token), ("EdDSA", &ed_token)] {
        assert!(
            futures::executor::block_on(verifier.verify(token)).is_ok(),
            "{name}"
        );
        group.bench_function(name, |b| {
            b.iter(|| futures::executor::block_on(verifier.verify(black_box(token))).unwrap())
        });
    }
    // One character in the middle of the signature changed.
    let mut tampered = es_token.clone().into_bytes();
    let at = tampered.len() - 20;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    group.bench_function("ES256_bad_signature", |b| {
        b.iter(|| futures::executor::block_on(verifier.verify(black_box(&tampered))).unwrap_err())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = verify
}
criterion_main!(benches);
