export type { GroupMember } from './shared';
export { GranteeDirectory } from './grantees';
export { GroupDirectory } from './groups';
