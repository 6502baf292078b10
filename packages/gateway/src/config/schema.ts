// The configuration file's JSON Schema, the one source of its shape: the shipped
// `schema/toolgate.schema.json` is written from it (`pnpm --filter @toolgate/gateway schema`) and the
// TypeScript types in `./types` are derived from it. Two annotations of our own: `unit` marks a value
// the loader resolves (a duration to milliseconds, a size to bytes, a store URL to its location), and
// `errorMessage` words the problem and its fix when a value fails its pattern or its forms.

// Node shapes the schema repeats, each written once. Constants `as const` (and builders whose
// strings are type parameters) keep the literal types `FromSchema` derives the config types from.
const nonEmptyString = { type: 'string', minLength: 1 } as const;
const stringList = { type: 'array', items: nonEmptyString } as const;
const someStrings = { ...stringList, minItems: 1 } as const;
const stringValues = { type: 'object', additionalProperties: { type: 'string' } } as const;
const limitList = { type: 'array', items: { $ref: '#/definitions/limit' } } as const;
const capabilityList = { type: 'array', items: { $ref: '#/definitions/capability' } } as const;
const listenHost = { ...nonEmptyString, description: 'Default 127.0.0.1.' } as const;

const port = <Description extends string>(description: Description) =>
  ({ type: 'integer', minimum: 0, maximum: 65535, description }) as const;

const httpUrl = {
  type: 'string',
  pattern: '^https?://',
  errorMessage: {
    message: 'is not an http:// or https:// URL',
    fix: 'write the full URL, e.g. http://127.0.0.1:9000/mcp',
  },
} as const;

const stateStore = <Description extends string>(description: Description) =>
  ({
    type: 'string',
    pattern: '^(memory:|sqlite:.+|postgres(ql)?://.+)$',
    description,
    unit: 'stateStore',
    errorMessage: {
      message: 'is not a state store',
      fix: "write 'memory:', 'sqlite:PATH' or a 'postgres://…' URL",
    },
  }) as const;

export const configSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://github.com/toolgate/toolgate/packages/gateway/schema/toolgate.schema.json',
  title: 'toolgate gateway configuration',
  description:
    'One file configures the governing MCP gateway: `toolgate gateway --config toolgate.yaml`. Strings may use ${env:NAME}, ${file:PATH} and, in upstream headers, ${credential:NAME}.',
  type: 'object',
  additionalProperties: false,
  required: ['upstreams', 'tenants'],
  properties: {
    $schema: {
      type: 'string',
      description: 'For editors: where this schema lives.',
    },
    listen: {
      type: 'object',
      description: 'Where the gateway serves: MCP at /mcp, the inbox at /inbox, /healthz, /readyz.',
      additionalProperties: false,
      properties: {
        host: listenHost,
        port: port('Default 8787; 0 takes a free port.'),
        publicUrl: {
          type: 'string',
          pattern: '^https?://',
          description:
            "The gateway's URL as clients reach it (behind a proxy); names the protected resource.",
          errorMessage: {
            message: 'is not an http:// or https:// URL',
            fix: 'write the full URL, e.g. http://127.0.0.1:9000/mcp',
          },
        },
        maxBody: {
          $ref: '#/definitions/size',
          description: 'Largest request body; default 1mb. Larger requests get 413.',
        },
        maxSessions: {
          type: 'integer',
          minimum: 1,
          description: 'Open MCP sessions at most; default 1000.',
        },
        maxSessionsPerClient: {
          type: 'integer',
          minimum: 1,
          description: 'Open MCP sessions per principal at most; default 100.',
        },
        sessionIdle: {
          $ref: '#/definitions/duration',
          description: 'Close a session idle this long; default 10m.',
        },
        allowedOrigins: {
          type: 'array',
          items: {
            type: 'string',
            minLength: 1,
          },
          description: 'Browser origins allowed to call.',
        },
        drain: {
          $ref: '#/definitions/duration',
          description: 'On shutdown, how long in-flight calls may finish; default 30s.',
        },
        maxParkedCalls: {
          type: 'integer',
          minimum: 1,
          description:
            "Calls of 2025-era upstreams held open at once while their mid-call question waits for a 2026-07-28 client's retry; default 1000. Beyond it such a question is declined.",
        },
        parkedCallWait: {
          $ref: '#/definitions/duration',
          description:
            "How long such a held call waits for the client's retry before it is ended (its question declined, its call cancelled); default and at most 10m, the life of the question's requestState.",
        },
      },
    },
    auth: {
      type: 'object',
      description: 'Who may call: static bearer tokens and/or JWTs verified against a JWKS.',
      additionalProperties: false,
      properties: {
        tokens: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['token', 'identity'],
            properties: {
              token: {
                type: 'string',
                minLength: 1,
                description: 'At least 32 characters. Write it as ${env:NAME} or ${file:PATH}, never inline.',
              },
              identity: {
                $ref: '#/definitions/identity',
              },
            },
          },
        },
        jwt: {
          type: 'object',
          additionalProperties: false,
          required: ['issuer', 'audience', 'jwks'],
          properties: {
            issuer: {
              type: 'string',
              minLength: 1,
            },
            audience: {
              oneOf: [
                {
                  type: 'string',
                  minLength: 1,
                },
                {
                  type: 'array',
                  items: {
                    type: 'string',
                    minLength: 1,
                  },
                  minItems: 1,
                },
              ],
              errorMessage: {
                message: 'must be a string or a list of strings',
                fix: 'name the expected audience',
              },
            },
            jwks: {
              type: 'string',
              minLength: 1,
              description:
                'A JWKS file path (relative to this file) or an https:// URL (http:// only to a loopback address).',
            },
            algorithms: {
              type: 'array',
              items: {
                type: 'string',
              },
              minItems: 1,
            },
            clockTolerance: {
              $ref: '#/definitions/duration',
            },
            maxLifetime: {
              $ref: '#/definitions/duration',
              description:
                'The longest a token may live: exp minus iat (or minus now, without iat); default 24h. Tokens without exp are refused.',
            },
            claims: {
              type: 'object',
              additionalProperties: false,
              properties: {
                tenant: {
                  type: 'string',
                  minLength: 1,
                  description: "Claim holding the tenant; default 'tenant'.",
                },
                principal: {
                  type: 'string',
                  minLength: 1,
                  description: "Claim holding the principal; default 'sub'.",
                },
                roles: {
                  type: 'string',
                  minLength: 1,
                  description: "Claim holding a list of roles; default 'roles'.",
                },
              },
            },
          },
        },
      },
    },
    stores: {
      type: 'object',
      additionalProperties: false,
      properties: {
        state: stateStore('Check-ins, grants, pins and the audit log: memory:, sqlite:PATH or postgres://…'),
        limits: {
          type: 'string',
          pattern: '^(memory:|rediss?://.+)$',
          description: 'Rate and budget buckets: memory: or redis://…',
          unit: 'limitsStore',
          errorMessage: {
            message: 'is not a limits store',
            fix: "write 'memory:' or a 'redis://…' URL",
          },
        },
      },
    },
    checkIns: {
      type: 'object',
      additionalProperties: false,
      required: ['key'],
      properties: {
        key: {
          type: 'string',
          minLength: 1,
          description: 'Signs check-in requests; at least 32 bytes. Write it as ${env:NAME}.',
        },
        ttl: {
          $ref: '#/definitions/duration',
          description: 'How long a check-in (and a grant) lives; default 15m.',
        },
        hold: {
          $ref: '#/definitions/duration',
          description: 'How long a call waits for an approver before CHECKIN_PENDING; default 30s.',
        },
        maxPending: {
          type: 'integer',
          minimum: 1,
          description:
            'Pending check-ins one principal may keep waiting (identical calls share one); over it, CHECKIN_LIMIT. Default 50.',
        },
      },
    },
    audit: {
      type: 'object',
      additionalProperties: false,
      required: ['signingKey'],
      properties: {
        signingKey: {
          type: 'string',
          minLength: 1,
          description: 'Ed25519 private key (PKCS#8 PEM); write it as ${file:PATH}.',
        },
        digestKey: {
          type: 'string',
          minLength: 32,
          description:
            'HMAC key for argument and result digests (at least 32 bytes, not the signing key); default derived from signingKey.',
        },
        onAuditFailure: {
          enum: ['refuse', 'allow'],
          description:
            'refuse (default): a call whose record cannot be written does not run (AUDIT_UNAVAILABLE); allow: it runs and its record waits in memory.',
        },
        durability: {
          enum: ['batch', 'record'],
          description:
            "batch (default): a call answers once its record is queued; the records of one commit window are written together (one transaction, one signature), and a crash loses at most that window's records (on SQLite, commits reach the disk within a second: a power cut may lose that second too). record: a call answers once its record is committed and synced to disk.",
        },
        commitWindow: {
          $ref: '#/definitions/duration',
          description:
            "How long a batch stays open for more records, a duration such as '5ms' (the default; at most 1m); with durability: batch.",
        },
        journal: {
          type: 'boolean',
          description:
            "With durability: batch on a SQLite store, true (the default): each commit window's records go to a journal file beside the database (<file>-audit-journal, one per process), and the database takes them every 100 ms in one commit; a crash still loses at most one window, and a restart stores what the journal held. false: the database takes every window.",
        },
        store: stateStore('Where the log is kept; default stores.state.'),
        checkpoints: {
          type: 'object',
          additionalProperties: false,
          anyOf: [
            {
              required: ['file'],
            },
            {
              required: ['webhook'],
            },
          ],
          description:
            'Signed checkpoints (seq, hash, time) published outside the store, for `toolgate audit verify --checkpoint`.',
          properties: {
            file: {
              type: 'string',
              minLength: 1,
              description:
                "A file outside the store, rewritten with the newest checkpoint (relative to the configuration's folder).",
            },
            webhook: {
              type: 'string',
              pattern: '^https?://',
              description: 'A URL each checkpoint is POSTed to as JSON (https, or http on loopback).',
              errorMessage: {
                message: 'is not an http:// or https:// URL',
                fix: 'write the full URL, e.g. http://127.0.0.1:9000/mcp',
              },
            },
            every: {
              type: 'integer',
              minimum: 1,
              description: 'Records between checkpoints; default 100.',
            },
            interval: {
              $ref: '#/definitions/duration',
              description: 'How long a stored record may wait for a checkpoint; default 10s.',
            },
          },
        },
      },
    },
    upstreams: {
      type: 'object',
      description: 'The MCP servers behind the gateway, by name.',
      propertyNames: {
        $ref: '#/definitions/name',
      },
      additionalProperties: {
        $ref: '#/definitions/upstream',
      },
    },
    credentials: {
      type: 'object',
      description: 'Named secrets for ${credential:NAME} in upstream headers.',
      propertyNames: {
        $ref: '#/definitions/name',
      },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          env: {
            type: 'string',
            minLength: 1,
            description: 'The environment variable holding it.',
          },
          file: {
            type: 'string',
            minLength: 1,
            description: 'A file holding it (relative to this file).',
          },
          perPrincipal: {
            type: 'object',
            additionalProperties: false,
            required: ['key'],
            description:
              'One value per tenant and principal, encrypted at rest (AES-256-GCM), set through {basePath}/api/credentials or `toolgate credentials set`.',
            properties: {
              store: {
                type: 'string',
                pattern: '^(memory:|sqlite:.+|postgres(ql)?://.+)$',
                description: 'memory:, sqlite:PATH or a postgres:// URL; default stores.state.',
                unit: 'stateStore',
                errorMessage: {
                  message:
                    "keeps per-principal credentials in memory:, sqlite:PATH or a 'postgres://' URL only",
                  fix: "set perPrincipal.store to 'sqlite:PATH' or a 'postgres://' URL",
                },
              },
              key: {
                type: 'string',
                minLength: 1,
                description: '32 bytes, base64 or hex, as ${env:NAME} or ${file:PATH}.',
              },
            },
          },
        },
      },
    },
    reload: {
      type: 'object',
      additionalProperties: false,
      description: 'What a reload may do on its own.',
      properties: {
        requireApproval: {
          enum: ['weakening', 'never'],
          description:
            'weakening: a reload that weakens security (a rule removed or widened, a guard off, tools un-pinned, a tenant given an upstream) waits in the inbox for an identity with the operator role; approved, it is applied; declined or expired, the serving configuration stays. Needs checkIns and the inbox.',
        },
      },
    },
    pins: {
      type: 'object',
      additionalProperties: false,
      description: "How upstreams' tool sets are pinned.",
      properties: {
        newTools: {
          enum: ['review', 'allow'],
          description:
            'A tool an upstream adds or renames while serving: held for review (toolgate pins accept tools:UPSTREAM) or listed at once. Default review.',
        },
      },
    },
    defaults: {
      type: 'object',
      additionalProperties: false,
      properties: {
        resultCeiling: {
          type: 'object',
          additionalProperties: false,
          properties: {
            maxChars: {
              type: 'integer',
              minimum: 1,
            },
            maxBytes: {
              $ref: '#/definitions/size',
            },
          },
        },
        annotations: {
          type: 'object',
          description: 'Declarations for imported tools whose annotation hint is true.',
          additionalProperties: false,
          properties: {
            readOnlyHint: {
              $ref: '#/definitions/hintDeclaration',
            },
            destructiveHint: {
              $ref: '#/definitions/hintDeclaration',
            },
            idempotentHint: {
              $ref: '#/definitions/hintDeclaration',
            },
            openWorldHint: {
              $ref: '#/definitions/hintDeclaration',
            },
          },
        },
      },
    },
    policy: {
      $ref: '#/definitions/policy',
    },
    limits: limitList,
    guards: {
      $ref: '#/definitions/guards',
    },
    tenants: {
      type: 'object',
      minProperties: 1,
      propertyNames: {
        $ref: '#/definitions/name',
      },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['upstreams'],
        properties: {
          upstreams: someStrings,
          policy: {
            $ref: '#/definitions/policy',
          },
          limits: limitList,
          guards: {
            $ref: '#/definitions/guards',
            description: 'Over the global guards, key by key; false turns one off for this tenant.',
          },
        },
      },
    },
    metrics: {
      type: 'object',
      description:
        "Prometheus metrics at /metrics: on the gateway's listener, or on metrics.listen. A token is required unless the endpoint is bound to loopback.",
      additionalProperties: false,
      properties: {
        enabled: {
          type: 'boolean',
          description: 'Serve /metrics; default true.',
        },
        listen: {
          type: 'object',
          additionalProperties: false,
          description: "A separate listener for /metrics; default the gateway's own.",
          properties: {
            host: listenHost,
            port: port('0 takes a free port.'),
          },
          required: ['port'],
        },
        token: {
          type: 'string',
          minLength: 16,
          description:
            'Bearer token a scraper sends (use ${env:…} or ${file:…}); required when /metrics is reachable beyond loopback.',
        },
        principals: {
          type: 'boolean',
          description:
            'Label calls with the principal as well as the tenant; default false (principals can be many).',
        },
      },
    },
    telemetry: {
      type: 'object',
      additionalProperties: false,
      properties: {
        otlp: {
          type: 'string',
          pattern: '^https?://',
          description: 'OTLP/HTTP traces endpoint, e.g. http://127.0.0.1:4318/v1/traces.',
          errorMessage: {
            message: 'is not an http:// or https:// URL',
            fix: 'write the full URL, e.g. http://127.0.0.1:9000/mcp',
          },
        },
        serviceName: {
          type: 'string',
          minLength: 1,
        },
        headers: stringValues,
      },
    },
    inbox: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: {
          type: 'boolean',
          description: 'Mount the approval inbox at /inbox; default true.',
        },
        webhook: {
          type: ['string', 'object'],
          description:
            'Post each new check-in as a Slack-compatible message: an incoming-webhook URL, or { url, publicUrl?, tenants?, by?, linkTtl?, headers? }.',
          pattern: '^https?://',
          additionalProperties: false,
          required: ['url'],
          properties: {
            url: httpUrl,
            publicUrl: {
              type: 'string',
              pattern: '^https?://',
              description:
                "The inbox's public address, for the message's links; default listen.publicUrl + /inbox.",
              errorMessage: {
                message: 'is not an http:// or https:// URL',
                fix: 'write the full URL, e.g. http://127.0.0.1:9000/mcp',
              },
            },
            tenants: stringList,
            by: {
              type: 'string',
              minLength: 1,
              description: "Who a link decision records; default 'webhook link'.",
            },
            linkTtl: {
              $ref: '#/definitions/duration',
            },
            headers: stringValues,
          },
          errorMessage: {
            message: 'is not an http:// or https:// URL',
            fix: 'write the full URL, e.g. http://127.0.0.1:9000/mcp',
          },
        },
      },
    },
    stdio: {
      type: 'object',
      additionalProperties: false,
      required: ['identity'],
      properties: {
        identity: {
          $ref: '#/definitions/identity',
          description: 'Who calls through `toolgate gateway --stdio`.',
        },
      },
    },
  },
  definitions: {
    name: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      errorMessage: {
        message: 'is not a valid name',
        fix: "use letters, digits, '_', '-' (and '.' for a limit), at most 64",
      },
    },
    duration: {
      type: 'string',
      pattern: '^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h|d)\\s*$',
      unit: 'milliseconds',
      errorMessage: {
        message: 'is not a duration',
        fix: "write a duration such as '500ms', '30s', '15m', '2h' or '1d'",
      },
    },
    size: {
      oneOf: [
        {
          type: 'integer',
          minimum: 1,
        },
        {
          type: 'string',
          pattern: '^\\s*\\d+(\\.\\d+)?\\s*([bB]|[kKmMgG][bB])\\s*$',
        },
      ],
      unit: 'bytes',
      errorMessage: {
        message: 'is not a size',
        fix: "write a size such as '512b', '64kb', '5mb' or '1gb' (or a number of bytes)",
      },
    },
    capability: {
      type: 'string',
      pattern: '^[a-z][a-z0-9_]*$',
      errorMessage: {
        message: 'is not a capability name',
        fix: "capabilities are snake_case, e.g. 'fs_write'",
      },
    },
    identity: {
      type: 'object',
      additionalProperties: false,
      required: ['tenant', 'principal'],
      properties: {
        tenant: {
          type: 'string',
          minLength: 1,
        },
        principal: {
          type: 'string',
          minLength: 1,
        },
        roles: stringList,
      },
    },
    hintDeclaration: {
      type: 'object',
      additionalProperties: false,
      properties: {
        checkIn: {
          enum: ['always'],
        },
        capabilities: capabilityList,
      },
    },
    toolDeclaration: {
      type: 'object',
      additionalProperties: false,
      properties: {
        checkIn: {
          enum: ['always', 'never'],
          description: "'never' overrides a default from annotations.",
        },
        capabilities: capabilityList,
        resultCeiling: {
          type: 'object',
          additionalProperties: false,
          required: ['maxChars'],
          properties: {
            maxChars: {
              type: 'integer',
              minimum: 1,
            },
            maxBytes: {
              $ref: '#/definitions/size',
            },
            narrowBy: someStrings,
          },
        },
        egress: {
          type: 'array',
          minItems: 1,
          items: {
            $ref: '#/definitions/argPath',
          },
          description:
            'Arguments that carry a URL or host the tool will reach; the egress guard judges them.',
        },
        paths: {
          $ref: '#/definitions/pathRoots',
          description:
            'Arguments that are file paths, and the absolute roots they must stay under; the path guard judges them.',
        },
      },
    },
    oauthClient: {
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      description: 'The gateway as an OAuth client: its id and a secret or a private key (private_key_jwt).',
      properties: {
        id: { type: 'string', minLength: 1 },
        secret: { type: 'string', minLength: 1 },
        privateKeyJwt: { type: 'string', minLength: 1 },
      },
    },
    upstream: {
      type: 'object',
      additionalProperties: false,
      properties: {
        command: {
          type: 'array',
          items: {
            type: 'string',
          },
          minItems: 1,
          description: 'A stdio server: the program and its arguments.',
        },
        env: { ...stringValues, description: 'Extra environment for a stdio server.' },
        cwd: {
          type: 'string',
          minLength: 1,
        },
        url: {
          type: 'string',
          pattern: '^https?://',
          description: 'A Streamable HTTP server.',
          errorMessage: {
            message: 'is not an http:// or https:// URL',
            fix: 'write the full URL, e.g. http://127.0.0.1:9000/mcp',
          },
        },
        headers: {
          ...stringValues,
          description: 'Sent to an HTTP server; values may use ${credential:NAME}.',
        },
        prefix: {
          type: 'string',
          pattern: '^[A-Za-z0-9_-]*$',
          errorMessage: {
            message: 'is not a valid prefix',
            fix: "use letters, digits, '_' and '-'",
          },
        },
        include: stringList,
        exclude: stringList,
        tools: {
          type: 'object',
          description: "Declarations per tool, by the upstream's own tool name.",
          additionalProperties: {
            $ref: '#/definitions/toolDeclaration',
          },
        },
        timeout: {
          $ref: '#/definitions/duration',
          description: 'How long one call may take; default 60s.',
        },
        auth: {
          type: 'object',
          additionalProperties: false,
          description: 'Who the server is told the call is from (HTTP only).',
          properties: {
            tokenExchange: {
              type: 'object',
              additionalProperties: false,
              required: ['tokenUrl', 'client'],
              description:
                "RFC 8693: the caller's verified JWT is exchanged per call for a token sent as the server's bearer.",
              properties: {
                tokenUrl: httpUrl,
                audience: { type: 'string', minLength: 1 },
                resource: { type: 'string', minLength: 1 },
                scope: { type: 'string', minLength: 1 },
                client: { $ref: '#/definitions/oauthClient' },
                timeout: { $ref: '#/definitions/duration' },
              },
            },
            clientCredentials: {
              type: 'object',
              additionalProperties: false,
              required: ['client'],
              description:
                'A token for the gateway itself when the server answers 401 (RFC 9728 metadata names its authorization server).',
              properties: {
                client: { $ref: '#/definitions/oauthClient' },
                scope: { type: 'string', minLength: 1 },
                tokenUrl: httpUrl,
                timeout: { $ref: '#/definitions/duration' },
              },
            },
          },
        },
        paths: {
          type: 'object',
          additionalProperties: false,
          properties: {
            base: {
              type: 'string',
              minLength: 1,
              description:
                "The absolute directory the server resolves relative path arguments from (an HTTP server's is otherwise unknown, and its relative paths are refused); a stdio server's is its cwd.",
            },
          },
        },
        sampling: {
          enum: ['allow', 'deny'],
          description:
            "Whether the server's sampling requests reach the client whose call is running (allow, the default) or are refused with an error the server reads (deny). Each is logged and audited.",
        },
        roots: {
          enum: ['relay', 'refuse'],
          description:
            "Whether the server may ask the client whose call is running for its roots (relay, the default); refuse for a server that would widen its own sandbox from a caller's roots.",
        },
      },
    },
    policy: {
      type: ['array', 'object'],
      description:
        'Rules (a list), or { file: a YAML/JSON list of rules | rules: [...], default: allow|deny|ask }.',
      items: {
        $ref: '#/definitions/rule',
      },
      additionalProperties: false,
      properties: {
        file: {
          type: 'string',
          minLength: 1,
          description: 'A YAML or JSON list of rules, relative to this file.',
        },
        rules: {
          $ref: '#/definitions/rules',
        },
        default: {
          enum: ['allow', 'deny', 'ask'],
          description: 'What decides when no rule matches; default allow.',
        },
      },
    },
    rules: {
      type: 'array',
      items: {
        $ref: '#/definitions/rule',
      },
    },
    rule: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'effect'],
      properties: {
        name: {
          type: 'string',
          minLength: 1,
        },
        tools: someStrings,
        when: {
          type: 'string',
          minLength: 1,
          description: 'A CEL expression over tool, args, identity and now.',
        },
        effect: {
          enum: ['allow', 'deny', 'ask'],
        },
        reason: {
          type: 'string',
          minLength: 1,
        },
        mode: {
          enum: ['enforce', 'shadow'],
        },
      },
    },
    argPath: {
      type: 'string',
      pattern: '^[^.*]+(\\.([^.*]+|\\*))*$',
      description: "An argument path: 'url', 'hooks.*.target' ('*' is every item).",
      errorMessage: {
        message: 'is not an argument path',
        fix: "name an argument, e.g. 'url' or 'hooks.*.target'",
      },
    },
    root: {
      type: 'string',
      pattern: '^/',
      description: "An absolute directory without '..', like /srv/data.",
      errorMessage: {
        message: 'is not an absolute directory',
        fix: "write an absolute path like '/srv/data'",
      },
    },
    pathRoots: {
      type: 'object',
      minProperties: 1,
      propertyNames: {
        $ref: '#/definitions/argPath',
      },
      additionalProperties: {
        type: 'array',
        minItems: 1,
        items: {
          $ref: '#/definitions/root',
        },
      },
    },
    guards: {
      type: 'object',
      additionalProperties: false,
      description:
        "Deterministic guards (docs/guards.md): each key mirrors canonicalChain's guards; true turns one on with its defaults, false leaves it out.",
      properties: {
        egress: {
          type: ['boolean', 'object'],
          additionalProperties: false,
          properties: {
            allowHosts: {
              type: 'array',
              items: {
                type: 'string',
                pattern: '^(\\*\\.)?[A-Za-z0-9.:\\[\\]_-]+$',
                errorMessage: {
                  message: 'is not a host pattern',
                  fix: "write a host, e.g. 'api.example.com' or '*.example.com'",
                },
              },
            },
            schemes: {
              type: 'array',
              minItems: 1,
              items: {
                type: 'string',
                pattern: '^[a-z][a-z0-9+.-]*$',
                errorMessage: {
                  message: 'is not a URL scheme',
                  fix: "write a scheme without ':', e.g. 'https'",
                },
              },
            },
            resolve: {
              type: 'boolean',
            },
            deadline: {
              $ref: '#/definitions/duration',
            },
            detectFormats: {
              type: 'boolean',
            },
          },
        },
        paths: {
          type: ['boolean', 'object'],
          additionalProperties: false,
          properties: {
            tools: {
              type: 'object',
              additionalProperties: {
                $ref: '#/definitions/pathRoots',
              },
            },
          },
        },
        commands: {
          type: ['boolean', 'object'],
          additionalProperties: false,
          properties: {
            tools: stringList,
            capability: {
              $ref: '#/definitions/capability',
            },
          },
        },
        secrets: {
          type: ['boolean', 'object'],
          additionalProperties: false,
          properties: {
            args: {
              type: 'boolean',
            },
            results: {
              type: 'boolean',
            },
            decode: {
              type: 'boolean',
            },
            values: {
              type: 'array',
              items: {
                type: 'string',
                minLength: 8,
              },
            },
            except: stringList,
            exceptFor: {
              type: 'object',
              additionalProperties: stringList,
            },
          },
        },
        crossServer: {
          type: ['boolean', 'object'],
          additionalProperties: false,
          properties: {
            action: {
              enum: ['refuse', 'ask'],
            },
            allowFlows: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['from', 'to'],
                properties: {
                  from: {
                    type: 'string',
                    minLength: 1,
                  },
                  to: {
                    type: 'string',
                    minLength: 1,
                  },
                },
              },
            },
            ownTools: {
              type: 'boolean',
            },
            minLength: {
              type: 'integer',
              minimum: 1,
            },
            perConversation: {
              type: 'integer',
              minimum: 1,
            },
            conversations: {
              type: 'integer',
              minimum: 1,
            },
          },
        },
        results: {
          type: ['boolean', 'object'],
          additionalProperties: false,
          properties: {
            mode: {
              enum: ['flag', 'withhold', 'strip'],
            },
            instructions: {
              enum: ['flag', 'withhold'],
            },
            tools: {
              enum: ['all', 'mcp'],
            },
            except: stringList,
          },
        },
      },
    },
    limit: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'per', 'window'],
      properties: {
        name: {
          type: 'string',
          pattern: '^[A-Za-z0-9._-]{1,64}$',
          errorMessage: {
            message: 'is not a valid name',
            fix: "use letters, digits, '_', '-' (and '.' for a limit), at most 64",
          },
        },
        per: {
          oneOf: [
            {
              enum: ['tenant', 'principal', 'tool'],
            },
            {
              type: 'array',
              items: {
                enum: ['tenant', 'principal', 'tool'],
              },
              minItems: 1,
              uniqueItems: true,
            },
          ],
          errorMessage: {
            message: "must be 'tenant', 'principal', 'tool' or a list of them",
            fix: 'say whose bucket the limit is kept in',
          },
        },
        calls: {
          type: 'integer',
          minimum: 1,
          description: 'A rate: calls per window.',
        },
        budget: {
          type: 'integer',
          minimum: 1,
          description: 'A budget: whole units per window (count cents or tokens), each call costing `cost`.',
        },
        cost: {
          type: 'object',
          additionalProperties: {
            type: 'integer',
            minimum: 0,
          },
          description: 'Whole units per call by tool glob; unmatched tools cost 0.',
        },
        window: {
          $ref: '#/definitions/duration',
        },
        tools: { ...someStrings, description: 'Count only these tools (globs).' },
      },
    },
  },
} as const;
