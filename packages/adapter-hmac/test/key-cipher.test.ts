import { describeKeyCipherContract, FakeCipher } from '@tollgate/core/testing';
import { SecretBox } from '../src';

describeKeyCipherContract('SecretBox (AES-256-GCM)', (masterSecret) => new SecretBox(masterSecret));
describeKeyCipherContract('fake cipher', (masterSecret) => new FakeCipher(masterSecret));
