import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64url = (data: Buffer) => data.toString('base64url');

/**
 * A software WebAuthn authenticator with one P-256 (ES256) credential: registration answers (attestation
 * "none") and assertions, with or without the user-verification flag, for an origin and RP id.
 */
export function softAuthenticator(rp: { id: string; origin: string }) {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const cose = Buffer.from(
    isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    ),
  );
  const credentialId = randomBytes(16);
  const id = b64url(credentialId);
  let counter = 0;
  const clientData = (type: string, challenge: string) =>
    Buffer.from(JSON.stringify({ type, challenge, origin: rp.origin, crossOrigin: false }));
  // flags: UP 0x01, UV 0x04, AT 0x40 (attested credential data follows)
  const flags = (userVerified: boolean, attested = false) => (userVerified ? 0x05 : 0x01) | (attested ? 0x40 : 0);
  const count = () => {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(++counter);
    return bytes;
  };

  return {
    id,
    /** The stored form of the credential (COSE public key), for inserting it directly. */
    publicKey: new Uint8Array(cose),
    /** A navigator.credentials.create() answer as the browser posts it (JSON). */
    register(challenge: string, userVerified = true) {
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(credentialId.length);
      const authData = Buffer.concat([
        sha256(rp.id),
        Buffer.from([flags(userVerified, true)]),
        Buffer.alloc(4),
        Buffer.alloc(16),
        idLength,
        credentialId,
        cose,
      ]);
      const attestationObject = Buffer.from(
        isoCBOR.encode(
          new Map<string, unknown>([
            ['fmt', 'none'],
            ['attStmt', new Map()],
            ['authData', authData],
          ]) as never,
        ),
      );
      return {
        id,
        rawId: id,
        type: 'public-key' as const,
        response: {
          clientDataJSON: b64url(clientData('webauthn.create', challenge)),
          attestationObject: b64url(attestationObject),
          transports: ['internal'],
        },
        clientExtensionResults: {},
      };
    },
    /** A navigator.credentials.get() answer for this credential. */
    assert(challenge: string, userVerified: boolean, userHandle = 'usr_test') {
      const clientDataJSON = clientData('webauthn.get', challenge);
      const authData = Buffer.concat([sha256(rp.id), Buffer.from([flags(userVerified)]), count()]);
      const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), privateKey);
      return {
        id,
        rawId: id,
        type: 'public-key' as const,
        response: {
          clientDataJSON: b64url(clientDataJSON),
          authenticatorData: b64url(authData),
          signature: b64url(signature),
          userHandle: b64url(Buffer.from(userHandle)),
        },
        clientExtensionResults: {},
      };
    },
  };
}
