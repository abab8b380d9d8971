import { isPrivateAddress, webhookTargetRefusal } from '../src';
import { PRIVATE_WEBHOOK_TARGETS, PUBLIC_WEBHOOK_TARGETS } from '../src/testing';

// The one address guard, spelling by spelling (the senders' contract runs the same lists end to end).
describe('webhook target guard', () => {
  it.each(PRIVATE_WEBHOOK_TARGETS)('refuses %s', (url) => {
    expect(webhookTargetRefusal(url, { allowPrivate: false })).toBe('must not be a local or private address');
    expect(webhookTargetRefusal(url, { allowPrivate: true })).toBeNull();
  });

  it.each(PUBLIC_WEBHOOK_TARGETS)('accepts %s', (url) => {
    expect(webhookTargetRefusal(url, { allowPrivate: false })).toBeNull();
  });

  it('judges addresses as a resolver or a socket reports them', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.1.1',
      '172.31.255.255',
      '192.168.0.1',
      '100.64.0.1',
      '100.100.100.200',
      '0.0.0.0',
      '169.254.169.254',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:0:7f00:1',
      '::127.0.0.1',
      '64:ff9b::7f00:1',
      '64:ff9b::10.0.0.1',
      '2002:c0a8:101::',
      'fe80::1',
      'fe80::1%eth0',
      'fd00:ec2::254',
      'fc00::1',
      'ff02::1',
      'garbage',
      '1.2.3',
      '01.2.3.4',
      '1:2:3:4:5:6:7:8:9',
      '',
    ])
      expect({ a, private: isPrivateAddress(a) }).toEqual({ a, private: true });
    for (const a of [
      '93.184.216.34',
      '8.8.8.8',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2a00:1450::1',
    ])
      expect({ a, private: isPrivateAddress(a) }).toEqual({ a, private: false });
  });
});
