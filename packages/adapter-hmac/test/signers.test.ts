import { createHash, createHmac, createPrivateKey, verify, webcrypto } from 'node:crypto';
import { SigningKeys, type UnitOfWork } from '@tollgate/core';
import { describeSignatureSchemeContract, FixedClock, InMemoryUnitOfWork, FakeCipher, RandomIds, FakeScheme } from '@tollgate/core/testing';
import { EcdsaP256Scheme, HmacSha256Scheme, publicKeyFromUncompressedHex, SecretBox } from '../src';

// RFC 6979 A.2.5: P-256 key, message "sample", SHA-256 (r || s).
const rfc6979 = (() => {
  const hex = (h: string) => Buffer.from(h, 'hex').toString('base64url');
  const [d, x, y] = [
    'C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721',
    '60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6',
    '7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299',
  ];
  const secret = createPrivateKey({ key: { kty: 'EC', crv: 'P-256', d: hex(d), x: hex(x), y: hex(y) }, format: 'jwk' }).export({
    format: 'der',
    type: 'pkcs8',
  });
  const r = 'EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716';
  const s = 'F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8';
  // DER: SEQUENCE { INTEGER r, INTEGER s }, each with a leading zero byte when its top bit is set.
  const int = (v: string) => (parseInt(v.slice(0, 2), 16) >= 0x80 ? `0221 00${v}` : `0220${v}`).replace(' ', '');
  const body = int(r) + int(s);
  return {
    name: 'RFC 6979 A.2.5 (P-256, SHA-256, "sample")',
    secret,
    publicKey: `04${x}${y}`.toLowerCase(),
    message: 'sample',
    deterministic: false,
    signatures: { p1363: (r + s).toLowerCase(), der: `30${(body.length / 2).toString(16)}${body}`.toLowerCase() },
  };
})();

// RFC 4231 test case 2.
const rfc4231 = {
  name: 'RFC 4231 test case 2',
  secret: Buffer.from('Jefe'),
  publicKey: '',
  message: 'what do ya want for nothing?',
  deterministic: true,
  signatures: { der: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843' },
};

describeSignatureSchemeContract('ECDSA P-256', new EcdsaP256Scheme(), [rfc6979]);
describeSignatureSchemeContract('HMAC-SHA256', new HmacSha256Scheme(), [rfc4231]);
describeSignatureSchemeContract('fake (core testing)', new FakeScheme(), [rfc4231]);

const keys = (scheme: EcdsaP256Scheme | HmacSha256Scheme, uow = new InMemoryUnitOfWork(), clock = new FixedClock()) => ({
  keys: new SigningKeys({ uow, clock, ids: new RandomIds(), scheme, cipher: new SecretBox('a master secret for tests') }),
  uow,
  clock,
});
const org = { organisationId: 'b8f3c1de-0000-4000-8000-000000000001', isTest: false };

/** `uow` whose transactions finish their work, then wait until `release()`: a read in flight while the test acts. */
function gated(uow: InMemoryUnitOfWork) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow: UnitOfWork = {
    read: (work) => uow.read(work),
    run: async (work) => {
      const result = await uow.run(work);
      await gate;
      return result;
    },
  };
  return { slow, release };
}

describe('ECDSA P-256 signing keys', () => {
  it('signs capsHashed so that the public key alone verifies it (DER, node crypto)', async () => {
    const { keys: signer } = keys(new EcdsaP256Scheme());
    const { signature, publicHash } = await signer.sign(org, 'edit,export');
    expect(publicHash).toMatch(/^04[0-9a-f]{128}$/);
    const key = publicKeyFromUncompressedHex(publicHash);
    expect(verify('sha256', Buffer.from('edit,export'), key, Buffer.from(signature, 'hex'))).toBe(true);
    expect(verify('sha256', Buffer.from('edit,exporT'), key, Buffer.from(signature, 'hex'))).toBe(false);
  });

  it('gives raw r||s (P1363) that WebCrypto verifies with the raw public key', async () => {
    const { keys: signer } = keys(new EcdsaP256Scheme());
    const { signature, publicHash } = await signer.sign(org, 'admin,edit', { encoding: 'p1363' });
    expect(signature).toHaveLength(128);
    const key = await webcrypto.subtle.importKey('raw', Buffer.from(publicHash, 'hex'), { name: 'ECDSA', namedCurve: 'P-256' }, false, [
      'verify',
    ]);
    const ok = await webcrypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      key,
      Buffer.from(signature, 'hex'),
      Buffer.from('admin,edit'),
    );
    const tampered = await webcrypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      key,
      Buffer.from(signature, 'hex'),
      Buffer.from('admin,edjt'),
    );
    expect([ok, tampered]).toEqual([true, false]);
  });

  it('keeps one key per organisation, creates it on first use and rotates without dropping the old one', async () => {
    const { keys: signer, uow, clock } = keys(new EcdsaP256Scheme());
    const first = await signer.sign(org, 'x');
    expect((await signer.sign(org, 'y')).publicHash).toBe(first.publicHash);
    expect((await keys(new EcdsaP256Scheme(), uow, clock).keys.sign(org, 'z')).publicHash).toBe(first.publicHash);
    expect((await signer.sign({ organisationId: 'b8f3c1de-0000-4000-8000-000000000002', isTest: false }, 'x')).publicHash).not.toBe(
      first.publicHash,
    );
    clock.advanceDays(30);
    const rotated = await signer.rotate(org);
    const after = await signer.sign(org, 'x');
    expect(after.publicHash).toBe(rotated.publicKey);
    expect((await signer.active(org)).map((k) => k.publicKey)).toEqual([rotated.publicKey, first.publicHash]);
    expect(signer.publicKeyPem(rotated)).toMatch(/^-----BEGIN PUBLIC KEY-----/);
  });

  it('stores the private key only encrypted', async () => {
    const { keys: signer } = keys(new EcdsaP256Scheme());
    await signer.sign(org, 'x');
    const [record] = await signer.active(org);
    const plain = signer.reveal(record);
    expect(record.secretCiphertext).not.toContain(plain.toString('base64url'));
    expect(record.secretCiphertext).not.toContain(plain.toString('hex'));
    expect(() => new SecretBox('another master secret!!').open(record.secretCiphertext)).toThrow();
  });
});

describe('HMAC-SHA256 signing keys', () => {
  it('signs with the organisation secret; publicHash is the SHA-256 of the key id', async () => {
    const { keys: signer } = keys(new HmacSha256Scheme());
    const { signature, publicHash } = await signer.sign(org, 'edit');
    const [record] = await signer.active(org);
    const secret = signer.reveal(record);
    expect(signature).toBe(createHmac('sha256', secret).update('edit').digest('hex'));
    expect(createHmac('sha256', secret).update('edjt').digest('hex')).not.toBe(signature);
    expect(publicHash).toBe(createHash('sha256').update(record.id).digest('hex'));
  });

  /** The HMAC scheme's public hash of a key record (the SHA-256 of its id). */
  const hashOf = (record: { id: string }) => createHash('sha256').update(record.id).digest('hex');

  it('reads the key again when a rotation was heard during its read, and keeps the new one', async () => {
    const uow = new InMemoryUnitOfWork();
    const other = keys(new HmacSha256Scheme(), uow).keys;
    await other.sign(org, 'x');
    const { slow, release } = gated(uow);
    const signer = keys(new HmacSha256Scheme(), slow as InMemoryUnitOfWork).keys;
    signer.setLive(true);
    const loading = signer.sign(org, 'y'); // reads the first key, then waits
    const rotated = await other.rotate(org);
    signer.forget(org.organisationId); // the change feed tells this instance of the rotation
    release();
    // Kept, the first read would sign answers from memory with the replaced key.
    expect((await loading).publicHash).toBe(hashOf(rotated));
    expect(signer.signHeld(org, 'z')?.publicHash).toBe(hashOf(rotated));
  });

  it('reads the key again across a lost and regained change feed (a rotation may have gone unheard)', async () => {
    const uow = new InMemoryUnitOfWork();
    const other = keys(new HmacSha256Scheme(), uow).keys;
    await other.sign(org, 'x');
    const { slow, release } = gated(uow);
    const signer = keys(new HmacSha256Scheme(), slow as InMemoryUnitOfWork).keys;
    signer.setLive(true);
    const loading = signer.sign(org, 'y'); // reads the first key, then waits
    signer.setLive(false); // the feed dropped
    const rotated = await other.rotate(org); // unheard
    signer.setLive(true); // heard again
    release();
    expect((await loading).publicHash).toBe(hashOf(rotated));
    expect(signer.signHeld(org, 'z')?.publicHash).toBe(hashOf(rotated));
  });

  it("keeps an organisation's first key although its own creation is reported while it reads", async () => {
    const uow = new InMemoryUnitOfWork();
    const signer = keys(new HmacSha256Scheme(), uow).keys;
    signer.setLive(true);
    const first = signer.sign(org, 'x');
    signer.forget(org.organisationId); // as the change feed reports the key this very read creates
    const { publicHash } = await first;
    expect(signer.signHeld(org, 'y')?.publicHash).toBe(publicHash);
  });

  it('refuses a short master secret', () => {
    expect(() => new SecretBox('short')).toThrow(/at least 16/);
  });

  it('the fake test cipher round-trips', () => {
    expect(new FakeCipher().open(new FakeCipher().seal(Buffer.from('x'))).toString()).toBe('x');
  });
});
