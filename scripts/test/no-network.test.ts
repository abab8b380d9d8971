import https from 'node:https';

// Every test file runs with nock refusing connections beyond loopback (jest.setup.js).
it('refuses a connection to a host outside this machine', async () => {
  const error = await new Promise<Error>((resolve) => {
    const req = https.get('https://api.stripe.com/v1/charges', () => resolve(new Error('connected')));
    req.on('error', resolve);
  });
  expect(error.message).toMatch(/Nock: Disallowed net connect/);
});
