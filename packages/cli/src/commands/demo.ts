import { setUpDemo } from '@tollgate/runtime';
import type { CommandModule } from '../command';

export const demo: CommandModule = {
  register(program, { io, services }) {
    program
      .command('demo')
      .description('create the demo organisation, its catalog (live and test) and two keys')
      .action(async () => {
        const d = await setUpDemo((await services()).core);
        io.out(`demo organisation "${d.organisation}" ready`);
        io.out(`live key (shown once): ${d.liveKey.plaintext}`);
        io.out(`test key (shown once): ${d.testKey.plaintext}`);
      });
  },
};
