import { sql, type Kysely } from 'kysely';

/**
 * Tier tags are named by plans (`tierTag: "pro"` creates or reuses one): a name is unique within an
 * organisation, case-insensitively. Tags that already share a name are merged into the oldest first.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    with ranked as (
      select id, first_value(id) over (partition by organisation_id, lower(name) order by created_at, id) as keep
      from tier_tags
    )
    update plans set tier_tag_id = ranked.keep from ranked where plans.tier_tag_id = ranked.id and ranked.id <> ranked.keep`.execute(db);
  await sql`
    delete from tier_tags t using (
      select id, first_value(id) over (partition by organisation_id, lower(name) order by created_at, id) as keep from tier_tags
    ) ranked
    where t.id = ranked.id and ranked.id <> ranked.keep`.execute(db);
  await sql`create unique index tier_tags_name on tier_tags (organisation_id, lower(name))`.execute(db);
  await sql`create index tier_tags_page on tier_tags (organisation_id, created_at, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists tier_tags_page`.execute(db);
  await sql`drop index if exists tier_tags_name`.execute(db);
}
