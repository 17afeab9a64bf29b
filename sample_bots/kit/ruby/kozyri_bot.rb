# frozen_string_literal: true

# Starter kit for Kozyri Arena bots in Ruby (the standard library only).
#
# Subclass Kozyri::Bot, implement choose, and call Kozyri.run(MyBot.new). The kit speaks
# protocol v1 for you: it answers hello with ready, turns every request into a call to choose
# and sends the answer, and returns on shutdown or end of input. It asks the referee for
# observations as deltas and rebuilds the whole observation from them, so choose sees exactly
# what the referee would send whole (set @observations = "full" to be sent them whole).
# stdout belongs to the protocol: log with Kozyri.log, which writes to stderr.
#
#   require "kozyri_bot"
#
#   class First < Kozyri::Bot
#     def choose(request)
#       0 # an index into request.legal_actions, or one of its action hashes
#     end
#   end
#
#   Kozyri.run(First.new)

require "json"

module Kozyri
  PROTOCOL_VERSION = 1
  RANKS = "56789TJQKA"

  # A message from the referee that the kit cannot read.
  class ProtocolError < StandardError; end

  # The start of the match.
  Hello = Struct.new(:game, :players, :seat, :params, :message, keyword_init: true)

  # One legal action: its "type", its "card" (nil if it has none), and the whole hash.
  Action = Struct.new(:type, :card, :json, keyword_init: true)

  # Your turn: the whole observation (rebuilt from deltas) and the legal actions.
  Request = Struct.new(:id, :deal, :game, :seat, :hand, :legal_actions, :observation,
                       :time_left_ms, :move_ms, keyword_init: true)

  module_function

  # Write a line to stderr (the referee keeps it with the match log and the replay).
  def log(*parts)
    $stderr.puts(parts.join(" "))
    $stderr.flush
  end

  # Rank of a card: "TH" -> 10; the ace is 14.
  def rank(card) = RANKS.index(card[0]) + 5

  # Suit letter of a card: "TH" -> "H".
  def suit(card) = card[1]

  # Does card beat top for a player whose own trump suit is trump (nil: none)?
  def beats?(card, top, trump)
    return rank(card) > rank(top) if suit(card) == suit(top)

    !trump.nil? && suit(card) == trump
  end

  # Bring observation (the last one received, or {}) up to date with delta, in place: keys in
  # "drop" go, keys in "set" take their new value, lists in "append" grow by the items given.
  def apply_delta(observation, delta)
    raise ProtocolError, "a delta that is not an object" unless delta.is_a?(Hash)

    (delta["drop"] || []).each { |key| observation.delete(key) }
    observation.update(delta["set"] || {})
    (delta["append"] || {}).each do |key, items|
      list = observation[key]
      raise ProtocolError, "a delta appends to #{key.inspect}, which is not a list" unless list.is_a?(Array)

      list.concat(items)
    end
    observation
  end

  # The protocol loop: one JSON message per line of input until shutdown or end of input.
  # A malformed message ends it with a ProtocolError saying what and where.
  def run(bot, input: $stdin, output: $stdout)
    output.sync = true
    input.each_line.with_index(1) do |line, number|
      next if line.strip.empty?

      message = parse(line, number)
      reply = answer(bot, message, number)
      output.write("#{JSON.generate(reply)}\n") if reply
      break if message["type"] == "shutdown"
    end
  end

  def answer(bot, message, number)
    bot.handle(message)
  rescue ProtocolError => e
    raise ProtocolError, "malformed message from the referee (line #{number}): #{e.message}"
  end

  def parse(line, number)
    message = JSON.parse(line)
    raise ProtocolError, "not a JSON object" unless message.is_a?(Hash)

    message
  rescue JSON::ParserError, ProtocolError => e
    raise ProtocolError, "malformed message from the referee (line #{number}): #{e.message}"
  end

  # Override choose; the other hooks are optional.
  class Bot
    attr_accessor :name, :observations, :debug
    attr_reader :hello, :seat

    def initialize
      @name = nil # sent in ready
      @observations = "delta" # "delta" (rebuilt by the kit) or "full"
      @debug = nil # set in choose to attach a note to the answer
      @hello = nil
      @seat = 0
      @kept = {}
    end

    def on_hello(hello); end

    # Return an index into request.legal_actions or one of its action hashes.
    def choose(request)
      raise NotImplementedError, "#{self.class} must implement choose"
    end

    def on_error(message)
      Kozyri.log("referee:", message["status"], message["message"])
    end

    # A deal is over; observation is your view right after it.
    def on_deal_end(message, observation); end

    def on_match_end(message); end

    # React to one message; the hash to send back, or nil.
    def handle(message)
      case message["type"]
      when "hello" then ready(message)
      when "request" then answer(message)
      when "error" then on_error(message) && nil
      when "deal_end" then on_deal_end(message, observation_of(message)) && nil
      when "match_end" then on_match_end(message) && nil
      when nil then raise ProtocolError, "no \"type\""
      end
    end

    private

    def ready(message)
      @seat = message["seat"]
      @hello = Hello.new(game: message["game"], players: message["players"], seat: @seat,
                         params: message["params"], message: message)
      on_hello(@hello)
      reply = { "type" => "ready", "protocol" => PROTOCOL_VERSION }
      reply["name"] = @name if @name
      reply["observations"] = @observations unless @observations == "full"
      reply
    end

    # The whole observation of a request or deal_end. The bot gets a copy (its top-level lists
    # and objects too, as the Python kit gives), so changing it cannot spoil the kit's own,
    # which the next delta builds on; a whole deep copy would cost more with every move.
    def observation_of(message)
      if message.key?("delta")
        Kozyri.apply_delta(@kept, message["delta"])
      elsif message["observation"].is_a?(Hash)
        @kept = message["observation"]
      else
        raise ProtocolError, "no observation"
      end
      @kept.transform_values { |value| value.is_a?(Array) || value.is_a?(Hash) ? value.dup : value }
    end

    def answer(message)
      legal = message["legal_actions"]
      raise ProtocolError, "no legal_actions" unless legal.is_a?(Array) && !legal.empty?

      observation = observation_of(message)
      @debug = nil
      choice = choose(request_of(message, observation, legal))
      reply = { "type" => "action", "id" => message["id"] }
      choice.is_a?(Integer) ? reply["index"] = choice : reply["action"] = choice
      reply["debug"] = @debug.to_s if @debug
      reply
    end

    def request_of(message, observation, legal)
      actions = legal.map { |a| Action.new(type: a["type"], card: a["card"], json: a) }
      Request.new(id: message["id"], deal: message["deal"], game: observation["game"],
                  seat: @seat, hand: observation["hand"] || [], legal_actions: actions,
                  observation: observation, time_left_ms: message["time_left_ms"],
                  move_ms: message["move_ms"])
    end
  end
end
