//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03), in place with a detached tag.
//!
//! The construction is the draft's, as `chacha20poly1305::XChaCha20Poly1305` implements it:
//! HChaCha20 of the key and the nonce's first 16 bytes gives a per-message subkey, which
//! seals with the IETF ChaCha20-Poly1305 AEAD (RFC 8439) under the nonce `0u32 || nonce[16..]`.
//! HChaCha20 comes from RustCrypto's `chacha20`; the AEAD from `ring`, whose assembly does a
//! round's seal plus open of 150 bytes in ~0.7 µs where RustCrypto's runtime-dispatched AVX2
//! build took ~3.4 µs on the same machine (docs/contributing/performance-lab-notes.md). Tokens are byte-for-byte
//! those of `chacha20poly1305` (`tests/vectors/`, and a property test against that crate).

use chacha20::{R20, hchacha};
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, Tag, UnboundKey};
use zeroize::Zeroizing;

/// Key length (XChaCha20 and its subkey).
pub(super) const KEY_LEN: usize = 32;
/// Nonce length of XChaCha20.
pub(super) const NONCE_LEN: usize = 24;
/// Poly1305 tag length.
pub(super) const TAG_LEN: usize = 16;

/// The message's ChaCha20-Poly1305 key and 12-byte nonce for `nonce` under `key`.
fn subkey(key: &[u8; KEY_LEN], nonce: &[u8; NONCE_LEN]) -> (LessSafeKey, Nonce) {
    let (head, tail) = nonce.split_at(16);
    let derived: Zeroizing<[u8; KEY_LEN]> =
        Zeroizing::new(hchacha::<R20>(key.into(), head.try_into().expect("16 bytes")).0);
    // A 32-byte key is the only length CHACHA20_POLY1305 checks for.
    let unbound = UnboundKey::new(&CHACHA20_POLY1305, &derived[..]).expect("32-byte key");
    let mut ietf_nonce = [0u8; 12];
    ietf_nonce[4..].copy_from_slice(tail);
    (
        LessSafeKey::new(unbound),
        Nonce::assume_unique_for_key(ietf_nonce),
    )
}

/// Encrypts `in_out` in place and returns the tag. Fails only for a message longer than
/// ChaCha20's 256 GiB.
pub(super) fn seal_in_place(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    associated_data: &[u8],
    in_out: &mut [u8],
) -> Result<[u8; TAG_LEN], ()> {
    let (key, nonce) = subkey(key, nonce);
    let tag = key
        .seal_in_place_separate_tag(nonce, Aad::from(associated_data), in_out)
        .map_err(|_| ())?;
    tag.as_ref().try_into().map_err(|_| ())
}

/// Checks `tag` and decrypts `in_out` in place. On failure `in_out` holds no plaintext
/// (ring overwrites it) and must not be used.
pub(super) fn open_in_place(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    associated_data: &[u8],
    in_out: &mut [u8],
    tag: &[u8; TAG_LEN],
) -> Result<(), ()> {
    let (key, nonce) = subkey(key, nonce);
    key.open_in_place_separate_tag(
        nonce,
        Aad::from(associated_data),
        Tag::from(*tag),
        in_out,
        0..,
    )
    .map(|_| ())
    .map_err(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        let text: String = text.split_whitespace().collect();
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    /// draft-irtf-cfrg-xchacha-03, A.3.1: the AEAD_XChaCha20_Poly1305 test vector.
    #[test]
    fn the_drafts_test_vector_seals_and_opens() {
        let plaintext = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let aad = hex("50515253c0c1c2c3c4c5c6c7");
        let key: [u8; 32] = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
            .try_into()
            .unwrap();
        let nonce: [u8; 24] = hex("404142434445464748494a4b4c4d4e4f5051525354555657")
            .try_into()
            .unwrap();
        let ciphertext = hex(
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb
             731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452
             2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
             21f9664c97637da9768812f615c68b13b52e",
        );
        let tag = hex("c0875924c1c7987947deafd8780acf49");

        let mut buffer = plaintext.to_vec();
        let sealed_tag = seal_in_place(&key, &nonce, &aad, &mut buffer).unwrap();
        assert_eq!(buffer, ciphertext);
        assert_eq!(sealed_tag.to_vec(), tag);

        open_in_place(&key, &nonce, &aad, &mut buffer, &sealed_tag).unwrap();
        assert_eq!(buffer, plaintext);
    }

    #[test]
    fn any_change_fails_to_open() {
        let key = [7u8; 32];
        let nonce = [9u8; 24];
        let mut sealed = b"state".to_vec();
        let tag = seal_in_place(&key, &nonce, b"aad", &mut sealed).unwrap();

        let mut flipped_tag = tag;
        flipped_tag[15] ^= 1;
        let mut other_nonce = nonce;
        other_nonce[0] ^= 1; // in HChaCha20's part
        let mut other_tail = nonce;
        other_tail[23] ^= 1; // in the IETF nonce
        let mut flipped_text = sealed.clone();
        flipped_text[0] ^= 1;
        for (key, nonce, aad, text, tag) in [
            ([8u8; 32], nonce, &b"aad"[..], sealed.clone(), tag),
            (key, other_nonce, b"aad", sealed.clone(), tag),
            (key, other_tail, b"aad", sealed.clone(), tag),
            (key, nonce, b"aae", sealed.clone(), tag),
            (key, nonce, b"aad", flipped_text, tag),
            (key, nonce, b"aad", sealed.clone(), flipped_tag),
        ] {
            let mut text = text;
            assert_eq!(open_in_place(&key, &nonce, aad, &mut text, &tag), Err(()));
        }
        open_in_place(&key, &nonce, b"aad", &mut sealed, &tag).unwrap();
        assert_eq!(sealed, b"state");
    }

    proptest::proptest! {
        /// Every key, nonce, associated data and message seals to the bytes of RustCrypto's
        /// `XChaCha20Poly1305`, and each opens what the other sealed.
        #[test]
        fn seals_exactly_as_the_reference_crate(
            key in proptest::array::uniform32(proptest::num::u8::ANY),
            nonce in proptest::collection::vec(proptest::num::u8::ANY, NONCE_LEN),
            aad in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            message in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
        ) {
            use chacha20poly1305::aead::{Aead, KeyInit, Payload};
            let nonce: [u8; NONCE_LEN] = nonce.try_into().unwrap();
            let reference = chacha20poly1305::XChaCha20Poly1305::new((&key).into());
            let expected = reference
                .encrypt((&nonce).into(), Payload { msg: &message, aad: &aad })
                .unwrap();

            let mut sealed = message.clone();
            let tag = seal_in_place(&key, &nonce, &aad, &mut sealed).unwrap();
            sealed.extend_from_slice(&tag);
            proptest::prop_assert_eq!(&sealed, &expected);

            let (text, tag) = expected.split_at(message.len());
            let mut opened = text.to_vec();
            open_in_place(&key, &nonce, &aad, &mut opened, tag.try_into().unwrap()).unwrap();
            proptest::prop_assert_eq!(&opened, &message);
            let reopened = reference
                .decrypt((&nonce).into(), Payload { msg: &sealed, aad: &aad })
                .unwrap();
            proptest::prop_assert_eq!(reopened, message);
        }
    }
}
