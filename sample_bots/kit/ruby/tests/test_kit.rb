# frozen_string_literal: true

# Unit tests of the Ruby kit: answering, delta rebuilds, malformed input (minitest).
#
#   KOZYRI_DELTAS=deltas.jsonl ruby -I.. test_kit.rb
#
# KOZYRI_DELTAS (optional) names a file of JSON lines {"delta": ...}, deltas as the referee
# sends them, some with "full": the observation rebuilt by then ({"reset": true} starts a new
# sequence).

require "json"
require "minitest/autorun"
require "stringio"
require "kozyri_bot"

class Recorder < Kozyri::Bot
  attr_reader :requests, :deal_ends

  def initialize
    super
    @name = "tést"
    @requests = []
    @deal_ends = []
  end

  def choose(request)
    @requests << request
    request.observation["hand"] << "spoilt" # the bot's copy: the kit's stays whole
    @debug = 'say "hi"'
    request.legal_actions.size - 1
  end

  def on_deal_end(_message, observation)
    @deal_ends << observation
  end
end

class First < Kozyri::Bot
  def choose(_request) = 0
end

class KitTest < Minitest::Test
  CONVERSATION = <<~LINES
    {"type":"hello","protocol":1,"game":"svoi-kozyri","players":3,"seat":1}

    {"type":"request","id":7,"deal":0,"observation":{"game":"svoi-kozyri","deal":0,"hand":["8H","TD"],"pile":[]},"legal_actions":[{"type":"beat","card":"8H"},{"type":"pick_up"}]}
    {"type":"error","id":7,"status":"timeout","message":"late"}
    {"type":"request","id":8,"deal":0,"delta":{"set":{"hand":["TD","9S","AC"]},"append":{"pile":["8H"]}},"legal_actions":[{"type":"beat","card":"8H"},{"type":"pick_up"}]}
    {"type":"deal_end","deal":0,"delta":{"set":{"deal":1},"drop":["pile"]}}
    {"type":"match_end","place":1}
    {"type":"shutdown"}
    {"type":"request","never":"read"}
  LINES

  def converse(bot, text)
    output = StringIO.new
    _, err = capture_io { Kozyri.run(bot, input: StringIO.new(text), output: output) }
    [output.string, err]
  end

  def test_a_conversation
    bot = Recorder.new
    out, err = converse(bot, CONVERSATION)
    assert_equal [
      { "type" => "ready", "protocol" => 1, "name" => "tést", "observations" => "delta" },
      { "type" => "action", "id" => 7, "index" => 1, "debug" => 'say "hi"' },
      { "type" => "action", "id" => 8, "index" => 1, "debug" => 'say "hi"' }
    ], out.lines.map { |line| JSON.parse(line) }
    assert_includes err, "referee: timeout late"
    first, second = bot.requests
    assert_equal [1, "svoi-kozyri", 7], [first.seat, first.game, first.id]
    assert_equal %w[TD 9S AC spoilt], second.hand
    assert_equal ["8H"], second.observation["pile"]
    assert_equal %w[beat pick_up], second.legal_actions.map(&:type)
    assert_equal ["8H", nil], second.legal_actions.map(&:card)
    assert_equal [{ "game" => "svoi-kozyri", "deal" => 1, "hand" => %w[TD 9S AC] }], bot.deal_ends
  end

  def test_cards
    assert_equal [10, 14, "H"], [Kozyri.rank("TH"), Kozyri.rank("AS"), Kozyri.suit("TH")]
    assert Kozyri.beats?("QH", "TH", "S")
    assert Kozyri.beats?("6S", "AH", "S")
    refute Kozyri.beats?("6D", "AH", "S")
  end

  def test_malformed_messages_are_named_with_their_line
    [
      ["{\"type\":\"hello\",\"seat\":0}\n{\"type\":\"request\",\"observ\n", /\(line 2\): .*unexpected token/],
      ["[1,2]\n", /\(line 1\): not a JSON object/],
      ["{\"type\":\"request\",\"id\":1,\"observation\":{}}\n", /\(line 1\): no legal_actions/],
      ["{\"type\":\"request\",\"id\":1,\"delta\":{\"append\":{\"pile\":[\"8H\"]}},\"legal_actions\":[{}]}\n",
       /which is not a list/]
    ].each do |text, message|
      error = assert_raises(Kozyri::ProtocolError) { converse(First.new, text) }
      assert_match(/malformed message from the referee \(line \d\)/, error.message)
      assert_match message, error.message
    end
  end

  def test_deltas_rebuild_the_whole_observation
    path = ENV.fetch("KOZYRI_DELTAS", nil)
    skip "no KOZYRI_DELTAS file" unless path

    kept = {}
    checked = 0
    File.foreach(path) do |line|
      entry = JSON.parse(line)
      next kept = {} if entry["reset"]

      Kozyri.apply_delta(kept, entry["delta"])
      next unless entry.key?("full")

      assert_equal canonical(entry["full"]), canonical(kept), "observation #{checked}"
      checked += 1
    end
    puts "ok (#{checked} observations rebuilt)"
  end

  # The same JSON text for the same JSON value (member order aside; 1 and 1.0 and true differ).
  def canonical(value)
    JSON.generate(sorted(value))
  end

  def sorted(value)
    case value
    when Hash then value.sort.to_h { |key, item| [key, sorted(item)] }
    when Array then value.map { |item| sorted(item) }
    else value
    end
  end
end
