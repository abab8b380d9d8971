import { parseExpandList } from '@tollgate/http';
import { Expand } from '@tollgate/app-v1';

/** `expand=a,b` of exactly these values (an unknown one is a 400 naming the allowed ones). */
export const parseExpandV = (raw: unknown, allowed: readonly string[]): Expand => new Expand(parseExpandList(raw, allowed));

export { Expand };
