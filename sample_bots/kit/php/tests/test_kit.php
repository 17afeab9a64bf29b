<?php
/*
 * Unit tests of the PHP kit: answering, delta rebuilds, malformed input (plain asserts).
 *
 *     php -n -d zend.assertions=1 test_kit.php [DELTAS]
 *
 * DELTAS (optional) is a file of JSON lines {"delta": ...}, deltas as the referee sends them,
 * some with "full": the observation rebuilt by then ({"reset": true} starts a new sequence).
 * Prints "ok" and exits 0 when every check passes.
 */

declare(strict_types=1);

ini_set('zend.assertions', '1');
ini_set('assert.exception', '1');
require __DIR__ . '/../kozyri_bot.php';

final class Recorder extends Kozyri\Bot
{
    /** @var list<Kozyri\Request> */
    public array $requests = [];
    public array $dealEnds = [];

    public function __construct()
    {
        $this->name = 'tést';
    }

    public function choose(Kozyri\Request $request): int
    {
        $this->requests[] = $request;
        $this->debug = 'say "hi"';
        return count($request->legalActions) - 1;
    }

    public function onDealEnd(array $message, array $observation): void
    {
        $this->dealEnds[] = $observation;
    }
}

final class First extends Kozyri\Bot
{
    public function choose(Kozyri\Request $request): int
    {
        return 0;
    }
}

/** The output lines of a conversation, as decoded messages. */
function converse(Kozyri\Bot $bot, string $text): array
{
    $input = fopen('php://memory', 'w+');
    fwrite($input, $text);
    rewind($input);
    $output = fopen('php://memory', 'w+');
    Kozyri\loop($bot, $input, $output);
    rewind($output);
    $lines = array_filter(explode("\n", stream_get_contents($output)));
    return array_map(fn ($line) => json_decode($line, true), array_values($lines));
}

function test_conversation(): void
{
    $text = implode("\n", [
        '{"type":"hello","protocol":1,"game":"svoi-kozyri","players":3,"seat":1}',
        '',
        '{"type":"request","id":7,"deal":0,"observation":{"game":"svoi-kozyri","deal":0,"hand":["8H","TD"],"pile":[]},"legal_actions":[{"type":"beat","card":"8H"},{"type":"pick_up"}]}',
        '{"type":"request","id":8,"deal":0,"delta":{"set":{"hand":["TD","9S","AC"]},"append":{"pile":["8H"]}},"legal_actions":[{"type":"beat","card":"8H"},{"type":"pick_up"}]}',
        '{"type":"deal_end","deal":0,"delta":{"set":{"deal":1},"drop":["pile"]}}',
        '{"type":"match_end","place":1}',
        '{"type":"shutdown"}',
        '{"type":"request","never":"read"}',
    ]) . "\n";
    $bot = new Recorder();
    $out = converse($bot, $text);
    assert($out === [
        ['type' => 'ready', 'protocol' => 1, 'name' => 'tést', 'observations' => 'delta'],
        ['type' => 'action', 'id' => 7, 'index' => 1, 'debug' => 'say "hi"'],
        ['type' => 'action', 'id' => 8, 'index' => 1, 'debug' => 'say "hi"'],
    ]);
    [$first, $second] = $bot->requests;
    assert($first->seat === 1 && $first->game === 'svoi-kozyri' && $first->id === 7);
    assert($second->hand === ['TD', '9S', 'AC'] && $second->observation['pile'] === ['8H']);
    assert($second->legalActions[0]->type === 'beat' && $second->legalActions[0]->card === '8H');
    assert($second->legalActions[1]->card === null);
    assert($bot->dealEnds === [['game' => 'svoi-kozyri', 'deal' => 1, 'hand' => ['TD', '9S', 'AC']]]);
}

function test_cards(): void
{
    assert(Kozyri\rank('TH') === 10 && Kozyri\rank('AS') === 14 && Kozyri\suit('TH') === 'H');
    assert(Kozyri\beats('QH', 'TH', 'S') && Kozyri\beats('6S', 'AH', 'S'));
    assert(!Kozyri\beats('6D', 'AH', 'S'));
}

function test_malformed_messages(): void
{
    $cases = [
        ["{\"type\":\"hello\",\"seat\":0}\n{\"type\":\"request\",\"observ\n", '(line 2): '], ["{\"type\":\"hello\"\n", '(line 1): Syntax error'],
        ["[1,2]\n", '(line 1): not a JSON object'],
        ["{\"type\":\"request\",\"id\":1,\"observation\":{}}\n", '(line 1): no legal_actions'],
        ["{\"type\":\"request\",\"id\":1,\"delta\":{\"append\":{\"pile\":[\"8H\"]}},\"legal_actions\":[{}]}\n",
         'which is not a list'],
    ];
    foreach ($cases as [$text, $expected]) {
        try {
            converse(new First(), $text);
            assert(false, "no error for $text");
        } catch (Kozyri\ProtocolError $e) {
            assert(str_contains($e->getMessage(), 'malformed message from the referee (line '), $e->getMessage());
            assert(str_contains($e->getMessage(), $expected), $e->getMessage());
        }
    }
}

/** The same JSON (member order aside; 1, 1.0 and true differ). */
function canonical(mixed $value): mixed
{
    if (is_array($value) && !array_is_list($value)) {
        ksort($value, SORT_STRING);
    }
    return is_array($value) ? array_map('canonical', $value) : $value;
}

function test_deltas(string $path): int
{
    $kept = [];
    $checked = 0;
    foreach (new SplFileObject($path) as $line) {
        if (trim($line) === '') {
            continue;
        }
        $entry = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
        if (isset($entry['reset'])) {
            $kept = [];
            continue;
        }
        $kept = Kozyri\apply_delta($kept, $entry['delta']);
        if (array_key_exists('full', $entry)) {
            assert(canonical($kept) === canonical($entry['full']), "observation $checked differs");
            $checked++;
        }
    }
    assert($checked > 0);
    return $checked;
}

test_conversation();
test_cards();
test_malformed_messages();
$rebuilt = isset($argv[1]) ? test_deltas($argv[1]) : 0;
echo "ok ($rebuilt observations rebuilt)\n";
