// Package demo is the story behind `loopctl demo`: an agent built with package
// agent and provider/openai, talking to a scripted model server inside the
// process, that shows what the breakers do while things break.
//
// The in-process server is a loopback httptest server speaking the OpenAI Chat
// Completions wire format (llmtest) with three models: gpt-primary
// and the fallback chain gpt-backup-1, gpt-backup-2. Every model answers the
// same way, so any of them can carry a conversation on: it calls the tools a
// prompt asks for, one per turn, tries a failing tool again up to three more
// times, gives up on a refused one, and then answers. The tools are search
// (flaky; its backup is search_backup, a mirror) and calculator (reliable).
//
// The story is a sequence of agent runs on one [agent.Agent], so breaker state
// carries from run to run, with scripted faults between them:
//
//  1. everything is healthy;
//  2. gpt-primary answers HTTP 500 and gpt-backup-1 answers 429: the retry
//     ladder retries, the turns fail, the model breaker trips to the chain,
//     gpt-backup-1's rate limits escalate until its strikes run out, and the
//     chain advances to gpt-backup-2, which serves;
//  3. search fails: its breaker trips and the router sends the calls to
//     search_backup;
//  4. search_backup fails too: its breaker trips, and the next call is refused
//     softly; the model reads the refusal and answers without search;
//  5. everything is fixed; after the cooldowns the primary model is probed
//     twice and the model breaker recovers, and search is probed and its
//     breaker closes;
//  6. back to normal.
//
// With DefaultTiming the story takes about 13 seconds.
//
// Lines are written as events happen, with the elapsed time; a summary of
// models, tools and breaker transitions ends the output. [Run] checks that every
// scripted transition happened and reports the missing ones in
// [Summary.Missing].
//
// Time is injectable: [Config.Now] is the clock of both breakers and
// [Config.Wait] makes the pauses between runs, so a test can play the whole
// story on a fake clock whose waits only advance it. With [Config.BaseURL] the
// same agent, tools and prompts run against a real OpenAI-compatible server
// instead, without scripted faults or pauses.
package demo
