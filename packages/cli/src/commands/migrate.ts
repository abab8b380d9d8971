import type { CommandModule } from '../command';

export const migrate: CommandModule = {
  register(program, { io, services }) {
    program
      .command('migrate')
      .description('apply pending database migrations')
      .action(async () => {
        const applied = await (await services()).migrate();
        io.out(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
      });
  },
};
