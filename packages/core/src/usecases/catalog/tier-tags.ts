import { ErrorCodes, fail, invalid } from '../../errors';
import type { Id, Page, Tenant, TierTag } from '../../model';
import type { Repositories } from '../../ports';
import type { CoreDeps } from '../deps';
import type { PlanInput } from './inputs';

/** Tier tags: an organisation's names for plan tiers, shared by its live and test modes. */
export class TierTagAdmin {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids'>) {}

  /** The organisation's tier tags (shared by its live and test modes, as plans name them), oldest first. */
  async listTierTags(tenant: Tenant, query: { limit: number; after?: string; before?: string; search?: string }): Promise<Page<TierTag>> {
    return this.deps.uow.read((r) => r.plans.pageTierTags(tenant.organisationId, query));
  }

  /** A new tier tag; CONFLICT when the organisation has one of this name. */
  async createTierTag(tenant: Tenant, name: string): Promise<TierTag> {
    return this.deps.uow.run(async (r) => {
      if (await r.plans.findTierTag(tenant.organisationId, name.trim()))
        fail(ErrorCodes.CONFLICT, `a tier tag named ${name.trim()} exists`);
      return this.ensureTierTag(r, tenant, name);
    });
  }

  /** The tag a plan input names: by `tierTag` (a name, created when new) or `tierTagId`; `current` when neither is given. */
  async tierTagOf(
    r: Repositories,
    tenant: Tenant,
    input: Pick<PlanInput, 'tierTag' | 'tierTagId'>,
    current: TierTag | null,
  ): Promise<TierTag | null> {
    const byId = input.tierTagId === undefined ? undefined : await this.tierTag(r, tenant, input.tierTagId);
    if (input.tierTag === undefined) return byId === undefined ? current : byId;
    const byName = input.tierTag === null ? null : await this.ensureTierTag(r, tenant, input.tierTag);
    if (byId !== undefined && byId?.id !== byName?.id) invalid('tierTag', 'names another tag than tierTagId');
    return byName;
  }

  private async tierTag(r: Repositories, tenant: Tenant, id: Id | null): Promise<TierTag | null> {
    if (id === null) return null;
    const tag = await r.plans.getTierTag(id);
    if (!tag || tag.organisationId !== tenant.organisationId) return invalid('tierTagId', 'unknown tier tag');
    return tag;
  }

  private async ensureTierTag(r: Repositories, tenant: Tenant, raw: string): Promise<TierTag> {
    const name = raw.trim();
    if (!name) invalid('tierTag', 'must not be empty');
    const found = await r.plans.findTierTag(tenant.organisationId, name);
    if (found) return found;
    const now = this.deps.clock.now();
    const tag: TierTag = { id: this.deps.ids.newId(), organisationId: tenant.organisationId, name, createdAt: now, updatedAt: now };
    await r.plans.saveTierTag(tag);
    return tag;
  }
}
