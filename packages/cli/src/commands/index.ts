import type { CommandModule } from '../command';
import { demo } from './demo';
import { exportCommand } from './export';
import { importCommand } from './import';
import { keys } from './keys';
import { migrate } from './migrate';
import { orgs } from './orgs';
import { credits, usage } from './usage';
import { webhooks } from './webhooks';

/** Every command of `tollgate`, in the order `--help` lists them. A new command is a new module here. */
export const COMMANDS: CommandModule[] = [migrate, orgs, keys, webhooks, importCommand, exportCommand, demo, usage, credits];
