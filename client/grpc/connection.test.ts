import { describe, expect, it } from 'vitest';
import { connectionErrorText } from './connection.js';

// Details as grpc-js 1.14.7 wrote them here (refused, an HTTP port, another CA, plaintext to TLS);
// the resolution note with something to say is made up, as none of those had one.
describe("connectionErrorText: the useful part of grpc-js's connection errors", () => {
  it('drops the "No connection established" wrapping and an empty resolution note', () => {
    expect(
      connectionErrorText(
        'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:17999. Resolution note: ',
      ),
    ).toBe('connect ECONNREFUSED 127.0.0.1:17999');
    expect(
      connectionErrorText(
        'No connection established. Last error: unable to verify the first certificate. Resolution note: ',
      ),
    ).toBe('unable to verify the first certificate');
  });

  it('keeps a resolution note that says something', () => {
    expect(
      connectionErrorText(
        'No connection established. Last error: Error: connect ECONNREFUSED 10.0.0.9:6443. Resolution note: DNS TXT lookup failed',
      ),
    ).toBe('connect ECONNREFUSED 10.0.0.9:6443; DNS TXT lookup failed');
  });

  it("reduces OpenSSL's error line to its reason, and drops grpc-js's timestamps", () => {
    expect(
      connectionErrorText(
        'No connection established. Last error: Error: 805C6D09737F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n. Resolution note: ',
      ),
    ).toBe('wrong version number');
    expect(
      connectionErrorText(
        'No connection established. Last error: Failed to connect (2026-12-02T10:13:25.372Z). Resolution note: ',
      ),
    ).toBe('Failed to connect');
  });
});
