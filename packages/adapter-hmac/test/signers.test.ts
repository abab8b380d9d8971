import { createHash, createHmac, verify, webcrypto } from 'node:crypto';
import { FixedClock, InMemoryUnitOfWork } from '@tollgate/core/testing';
import { EcdsaSigner, HmacSigner, publicKeyFromUncompressedHex, SecretBox } from '../src';

const deps = () => ({ uow: new InMemoryUnitOfWork(), clock: new FixedClock(), masterSecret: 'a master secret for tests' });
const org = 'b8f3c1de-0000-4000-8000-000000000001';

describe('ECDSA P-256 signer', () => {
  it('signs capsHashed so that the public key alone verifies it (DER, node crypto)', async () => {
    const signer = new EcdsaSigner(deps());
    const { signature, publicHash } = await signer.sign(org, 'edit,export');
    expect(publicHash).toMatch(/^04[0-9a-f]{128}$/);
    const key = publicKeyFromUncompressedHex(publicHash);
    expect(verify('sha256', Buffer.from('edit,export'), key, Buffer.from(signature, 'hex'))).toBe(true);
    expect(verify('sha256', Buffer.from('edit,exporT'), key, Buffer.from(signature, 'hex'))).toBe(false);
  });

  it('gives raw r||s (P1363) that WebCrypto verifies with the raw public key', async () => {
    const signer = new EcdsaSigner(deps());
    const { signature, publicHash } = await signer.sign(org, 'admin,edit', { encoding: 'p1363' });
    expect(signature).toHaveLength(128);
    const key = await webcrypto.subtle.importKey('raw', Buffer.from(publicHash, 'hex'), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
    const ok = await webcrypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, Buffer.from(signature, 'hex'), Buffer.from('admin,edit'));
    const tampered = await webcrypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, Buffer.from(signature, 'hex'), Buffer.from('admin,edjt'));
    expect([ok, tampered]).toEqual([true, false]);
  });

  it('keeps one key per organisation, creates it on first use and rotates without dropping the old one', async () => {
    const d = deps();
    const signer = new EcdsaSigner(d);
    const first = await signer.sign(org, 'x');
    expect((await signer.sign(org, 'y')).publicHash).toBe(first.publicHash);
    expect((await new EcdsaSigner(d).sign(org, 'z')).publicHash).toBe(first.publicHash);
    expect((await signer.sign('b8f3c1de-0000-4000-8000-000000000002', 'x')).publicHash).not.toBe(first.publicHash);
    d.clock.advanceDays(30);
    const rotated = await signer.rotate(org);
    const after = await signer.sign(org, 'x');
    expect(after.publicHash).toBe(rotated.publicKey);
    expect((await signer.activeKeys(org)).map((k) => k.publicKey)).toEqual([rotated.publicKey, first.publicHash]);
    expect(EcdsaSigner.publicPem(rotated)).toMatch(/^-----BEGIN PUBLIC KEY-----/);
  });

  it('stores the private key only encrypted', async () => {
    const d = deps();
    const signer = new EcdsaSigner(d);
    await signer.sign(org, 'x');
    const [record] = await signer.activeKeys(org);
    const plain = signer.reveal(record);
    expect(record.secretCiphertext).not.toContain(plain.toString('base64url'));
    expect(record.secretCiphertext).not.toContain(plain.toString('hex'));
    expect(() => new SecretBox('another master secret!!').open(record.secretCiphertext)).toThrow();
  });
});

describe('HMAC-SHA256 signer', () => {
  it('signs with the organisation secret; publicHash is the SHA-256 of the key id', async () => {
    const signer = new HmacSigner(deps());
    const { signature, publicHash } = await signer.sign(org, 'edit');
    const [record] = await signer.activeKeys(org);
    const secret = signer.reveal(record);
    expect(signature).toBe(createHmac('sha256', secret).update('edit').digest('hex'));
    expect(createHmac('sha256', secret).update('edjt').digest('hex')).not.toBe(signature);
    expect(publicHash).toBe(createHash('sha256').update(record.id).digest('hex'));
  });

  it('refuses a short master secret', () => {
    expect(() => new SecretBox('short')).toThrow(/at least 16/);
  });
});
