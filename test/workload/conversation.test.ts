/**
 * Conversation building (workload/conversation.ts): turn t's messages are turn t − 1's plus its
 * reply plus a new user message; conversations share no prefix; the texts are sized once and the
 * same seed and tag give the same conversations.
 */
import { describe, expect, test } from 'vitest';
import { conversationLead, prepareConversations, type MultiTurnWorkload, type TextSizer } from '../../src/workload/conversation.js';
import type { ChatMessage } from '../../src/shapes/workload.js';

const workload = (over: Partial<MultiTurnWorkload> = {}): MultiTurnWorkload => ({
  kind: 'multiTurn',
  turns: 4,
  userTokens: 40,
  systemTokens: 100,
  thinkMs: { kind: 'fixed', value: 200 },
  seed: 7,
  ...over,
});

/** a stand-in sizer: the prefix, then words "w<i>" up to `tokens` words; records its calls */
function fakeSizer(): { size: TextSizer; calls: Array<[number, string]> } {
  const calls: Array<[number, string]> = [];
  return {
    calls,
    size: async (tokens, prefix) => {
      calls.push([tokens, prefix]);
      const words = prefix.split(' ').length;
      return prefix + Array.from({ length: Math.max(0, tokens - words) }, (_, i) => ` w${i}`).join('');
    },
  };
}

/** a stand-in for renderMessages: a plain transcript */
const render = (m: readonly ChatMessage[]) => m.map((x) => `${x.role}: ${x.content}\n`).join('') + 'assistant:';

async function prepared(over: Partial<MultiTurnWorkload> = {}, tag = 'runA-c140x2') {
  const s = fakeSizer();
  const conv = await prepareConversations({ workload: workload(over), tag, size: s.size, render, think: (k, t) => 100 * k + t, maxTokens: 16 });
  return { conv, calls: s.calls };
}

describe('prepareConversations', () => {
  test('sizes the system message once and one user message per turn, before any request', async () => {
    const { calls } = await prepared();
    expect(calls.map(([n]) => n)).toEqual([100, 40, 40, 40, 40]);
    // every sized prefix names the tag and the seed, so another run or cell sizes other texts
    for (const [, prefix] of calls) expect(prefix).toContain('runA-c140x2 seed 7');
  });

  test("turn t's messages are turn t − 1's, its reply and a new user message", async () => {
    const { conv } = await prepared();
    const replies = ['first reply ', 'second reply ', 'third reply '];
    for (let t = 2; t <= 4; t++) {
      const before = conv.messages(3, t - 1, replies);
      const now = conv.messages(3, t, replies);
      expect(now.slice(0, before.length)).toEqual(before);
      expect(now.slice(before.length)).toEqual([
        { role: 'assistant', content: replies[t - 2] },
        { role: 'user', content: conv.user(3, t).content },
      ]);
    }
    const first = conv.messages(3, 1, []);
    expect(first.map((m) => m.role)).toEqual(['system', 'user']);
    expect(conv.messages(3, 4, replies).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
  });

  test("the rendering of turn t − 1 is a prefix of turn t's (what a completions prefix cache reuses)", async () => {
    const { conv } = await prepared();
    const replies = [' r1', ' r2', ' r3'];
    const r1 = conv.request(0, 1, replies);
    const r2 = conv.request(0, 2, replies);
    expect(r2.prompt.startsWith(r1.prompt)).toBe(true);
    expect(r2).toMatchObject({ maxTokens: 16, turn: 2 });
    expect(r2.messages).toEqual(conv.messages(0, 2, replies));
  });

  test('conversations differ from their first character; their texts have the same length', async () => {
    const { conv } = await prepared();
    const texts = [0, 1, 2, 10, 17].map((k) => conv.system(k)!.content);
    // each conversation's number leads its texts (so they share no prefix), digits least significant first
    expect(new Set(texts.map((t) => t.slice(0, 6))).size).toBe(texts.length);
    expect(new Set(texts.map((t) => t.length)).size).toBe(1);
    expect(conv.system(17)!.content.startsWith(conversationLead(17, 'system'))).toBe(true);
    expect(conversationLead(17, 'system').startsWith('71')).toBe(true);
    // consecutive conversations differ at the very first character
    for (const k of [4, 9, 99]) expect(conv.system(k)!.content[0]).not.toBe(conv.system(k + 1)!.content[0]);
    // the user messages of one conversation differ by turn, and have the same length
    const users = [1, 2, 3, 4].map((t) => conv.user(5, t).content);
    expect(new Set(users).size).toBe(4);
    expect(new Set(users.map((u) => u.length)).size).toBe(1);
  });

  test('the same seed and tag give the same conversations; another seed or tag other texts', async () => {
    const a = (await prepared()).conv;
    const b = (await prepared()).conv;
    expect(b.messages(9, 3, ['x', 'y'])).toEqual(a.messages(9, 3, ['x', 'y']));
    const c = (await prepared({ seed: 8 })).conv;
    expect(c.user(9, 1).content).not.toBe(a.user(9, 1).content);
    const d = (await prepared({}, 'runB-c140x2')).conv;
    expect(d.system(9)!.content).not.toBe(a.system(9)!.content);
  });

  test('systemTokens 0: no system message, the first user message opens the conversation', async () => {
    const { conv, calls } = await prepared({ systemTokens: 0 });
    expect(calls).toHaveLength(4);
    expect(conv.system(0)).toBeUndefined();
    expect(conv.messages(0, 1, [])).toEqual([conv.user(0, 1)]);
  });

  test('think times come from the injected draw, per conversation and turn', async () => {
    const { conv } = await prepared();
    expect(conv.thinkMs(2, 3)).toBe(203);
  });

  test('bad input is an error naming the field or the rule', async () => {
    await expect(prepared({ turns: 0 })).rejects.toThrow(/turns = 0 is invalid/);
    await expect(prepared({ userTokens: 0 })).rejects.toThrow(/user = 0 is invalid/);
    await expect(prepared({ systemTokens: -1 })).rejects.toThrow(/system = -1 is invalid/);
    const { conv } = await prepared();
    expect(() => conv.messages(0, 3, ['only one'])).toThrow(/needs the replies of turns 1 … 2/);
    expect(() => conv.user(0, 5)).toThrow(/turn 5 is out of range: 1 … 4/);
    expect(() => conv.user(-1, 1)).toThrow(/conversation number -1/);
    const bad = prepareConversations({ workload: workload(), tag: 't', size: async () => 'elsewhere', render, think: () => 0, maxTokens: 16 });
    await expect(bad).rejects.toThrow(/does not start with its prefix/);
    const negative = await prepareConversations({ workload: workload(), tag: 't', size: fakeSizer().size, render, think: () => -1, maxTokens: 16 });
    expect(() => negative.thinkMs(0, 2)).toThrow(/think time -1 ms/);
  });

  test("a first turn past the server's max model length is refused, naming the sum and the fix; within it, prepared", async () => {
    const w = workload();
    const first = w.systemTokens + w.userTokens + 16;
    const over = prepareConversations({ workload: w, tag: 't', size: fakeSizer().size, render, think: () => 0, maxTokens: 16, maxModelLen: first - 1 });
    await expect(over).rejects.toThrow(
      `a conversation's first turn (system ${w.systemTokens} + user ${w.userTokens} + 16 output tokens) = ${first} tokens exceeds the server's max model length ${first - 1}; lower system= or user= in LLM_BENCH_WORKLOAD, or LLM_BENCH_MAX_TOKENS`,
    );
    const fits = await prepareConversations({ workload: w, tag: 't', size: fakeSizer().size, render, think: () => 0, maxTokens: 16, maxModelLen: first });
    expect(fits.turns).toBe(w.turns);
  });
});
