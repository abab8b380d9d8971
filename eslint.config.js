const tseslint = require('typescript-eslint');

module.exports = tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/fixtures/**', 'data/**', '**/*.js', 'scripts/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['packages/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['express*', 'kysely*', 'pg', 'pg-*', 'stripe', 'inversify', 'reflect-metadata', '@electric-sql/*', 'ajv*'],
              message: 'core imports nothing outside the Node standard library (DESIGN.md section 1)',
            },
          ],
        },
      ],
    },
  },
);
