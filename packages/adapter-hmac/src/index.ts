export { CryptoRandomness } from './random';
export { EcdsaP256Scheme, HmacSha256Scheme, publicKeyFromUncompressedHex, uncompressedHex } from './schemes';
export { SecretBox } from './secret-box';
export { HmacSignedLinks } from './signed-links';
