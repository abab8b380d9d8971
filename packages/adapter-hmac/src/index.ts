export { EcdsaSigner, HmacSigner, publicKeyFromUncompressedHex, uncompressedHex } from './signers';
export { SecretBox } from './secret-box';
