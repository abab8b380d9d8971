/** The mode of a Stripe secret or restricted key, read from its prefix (`sk_live_`, `rk_test_`, ...); undefined: not a Stripe key. */
export function stripeKeyMode(key: string): 'live' | 'test' | undefined {
  const m = /^(?:sk|rk)_(live|test)_/.exec(key);
  return m ? (m[1] as 'live' | 'test') : undefined;
}
