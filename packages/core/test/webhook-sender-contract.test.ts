import { describeWebhookSenderContract, ScriptedWebhookSender, type ReceiverBehaviour } from '../src/testing';

// The fake keeps the real sender's rules: a receiver scripted by path, no sockets.
describeWebhookSenderContract('fake', () => {
  const received: string[] = [];
  return {
    sender: (options) =>
      new ScriptedWebhookSender((req) => {
        const path = new URL(req.url).pathname;
        received.push(path);
        if (path === '/hang') return new Promise(() => undefined);
        if (path === '/redirect') return { status: 307, body: '' };
        return { status: 200, body: `got ${req.headers['webhook-id']} ${req.body}` };
      }, options),
    receiver: (behaviour: ReceiverBehaviour) => `https://receiver.example.com/${behaviour}`,
    received: () => received,
  };
});
