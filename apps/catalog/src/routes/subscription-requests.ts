import type { BatchAction, Proration, ServiceOnlyInput } from '@tollgate/core';
import { typed } from '@tollgate/http';

/** Request bodies of the catalog's subscription operations (`subscriptions.ts`), written from the published schemas. */

const proration = { enum: ['always_invoice', 'create_prorations', 'none'] };
export const itemsBody = typed<{
  items: (
    | { planId: string; action: 'remove' }
    | { planId: string; action: 'add'; grantee?: string; metadata?: Record<string, { quantity: number }> }
    | { planId: string; action: 'replace'; newPlanId: string }
  )[];
  proration?: Proration;
}>({
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    proration,
    items: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['planId', 'action'],
        properties: {
          planId: { type: 'string', minLength: 1 },
          action: { enum: ['add', 'remove', 'replace'] },
          newPlanId: { type: 'string', minLength: 1 },
          grantee: { type: 'string', minLength: 1 },
          metadata: {
            type: 'object',
            additionalProperties: { type: 'object', required: ['quantity'], properties: { quantity: { type: 'number' } } },
          },
        },
        if: { properties: { action: { const: 'replace' } } },
        then: { required: ['newPlanId'] },
      },
    },
  },
});
const enabled = { type: 'object', additionalProperties: false, required: ['enabled'], properties: { enabled: { type: 'boolean' } } };
export const portalBody = typed<{ returnUrl?: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['features'],
  properties: {
    returnUrl: { type: 'string', maxLength: 2048 },
    features: {
      type: 'object',
      additionalProperties: false,
      properties: {
        paymentMethodUpdate: enabled,
        invoiceHistory: enabled,
        customerUpdate: {
          type: 'object',
          additionalProperties: false,
          required: ['enabled', 'allowedUpdates'],
          properties: {
            enabled: { type: 'boolean' },
            allowedUpdates: { type: 'array', items: { enum: ['name', 'email', 'address', 'phone', 'shipping'] } },
          },
        },
        subscriptionCancel: {
          type: 'object',
          additionalProperties: false,
          required: ['enabled', 'when'],
          properties: { enabled: { type: 'boolean' }, when: { enum: ['now', 'end'] } },
        },
      },
    },
  },
});
export const batchBody = typed<{ action: BatchAction; subscriptionIds: string[] }>({
  type: 'object',
  additionalProperties: false,
  required: ['action', 'subscriptionIds'],
  properties: {
    action: { enum: ['cancel', 'enable-auto-renew', 'disable-auto-renew', 'delete'] },
    subscriptionIds: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', format: 'uuid' } },
  },
});
export const createBody = typed<Omit<ServiceOnlyInput, 'expiryDate'> & { expiryDate?: string; isPerpetual?: boolean }>({
  type: 'object',
  additionalProperties: false,
  required: ['plans', 'owner', 'interval', 'intervalCount'],
  properties: {
    plans: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['planId'],
        properties: {
          planId: { type: 'string', format: 'uuid' },
          metadata: {
            type: 'object',
            maxProperties: 50,
            additionalProperties: {
              type: 'object',
              additionalProperties: false,
              required: ['quantity'],
              properties: { quantity: { type: 'number', minimum: 1, maximum: 100000 } },
            },
          },
        },
      },
    },
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    grantee: { type: 'string', minLength: 1, maxLength: 255 },
    interval: { enum: ['day', 'week', 'month', 'year'] },
    intervalCount: { type: 'number', minimum: 1 },
    expiryDate: { type: 'string', format: 'date-time' },
    isPerpetual: { type: 'boolean' },
    cancelAtPeriodEnd: { type: 'boolean' },
  },
});
