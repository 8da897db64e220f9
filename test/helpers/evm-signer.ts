import { secp256k1 } from '@noble/curves/secp256k1.js';
import { addressOfPublicKey, personalMessageDigest } from '../../src/domain/integrity.js';

/** A fresh secp256k1 key: its EVM address and a signer of messages as the service's `sig` (r, s, v). */
export function testAccount() {
  const secretKey = secp256k1.utils.randomSecretKey();
  const address = addressOfPublicKey(secp256k1.getPublicKey(secretKey, false));
  const sign = (message: string, vBase = 27): string => {
    const recovered = secp256k1.sign(personalMessageDigest(message), secretKey, {
      prehash: false,
      format: 'recovered',
    });
    // noble puts the recovery byte first; the wire puts v last.
    const v = (recovered[0]! + vBase).toString(16).padStart(2, '0');
    return `0x${Buffer.from(recovered.subarray(1)).toString('hex')}${v}`;
  };
  return { address, sign };
}
