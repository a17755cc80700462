// ESLint (flat config): the recommended JavaScript and typescript-eslint rules, plus the type-aware rules
// that catch promises nobody awaits or handles. `pnpm lint` runs it with `prettier --check`.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', '.data/**', 'bench/results/**'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // a leading underscore marks a parameter kept for its position (express tells error handlers by arity)
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    // CommonJS files (jest.config.js, .dependency-cruiser.cjs) load modules with require
    rules: { '@typescript-eslint/no-require-imports': 'off' },
    languageOptions: {
      globals: Object.fromEntries(
        [
          'module',
          'require',
          'process',
          '__dirname',
          'console',
          'URL',
          'URLSearchParams',
          'fetch',
          'setTimeout',
          'clearTimeout',
          'Buffer',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
  // scripts that run in the browser: the SPA example and the sign-in pages' passkey script
  {
    files: ['examples/spa-signin/public/**/*.js', 'services/identity/assets/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'history',
          'navigator',
          'fetch',
          'URL',
          'URLSearchParams',
          'console',
          'oidc',
          'SimpleWebAuthnBrowser',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
  // last: turns off the rules that formatting decides (e.g. no-unexpected-multiline on Prettier's line breaks)
  prettier,
);
