# frozen_string_literal: true

# Any game, random, in Ruby: a uniformly random legal action in every game of the platform.
#
# The generator is seeded from the game and the seat, so the same match (same seed, same
# bots) plays out the same way again. The kit (kozyri_bot, on RUBYLIB) does the protocol.

require "kozyri_bot"
require "zlib"

class AnyGameRandom < Kozyri::Bot
  def initialize
    super
    @name = "any-game-random-ruby"
    @random = Random.new(0)
  end

  def on_hello(hello)
    @random = Random.new(Zlib.crc32("#{hello.game}/#{hello.players}/#{hello.seat}"))
    Kozyri.log("playing #{hello.game} in seat #{hello.seat} of #{hello.players}")
  end

  def choose(request)
    count = request.legal_actions.size
    index = @random.rand(count)
    @debug = "#{index + 1} of #{count}"
    index
  end
end

Kozyri.run(AnyGameRandom.new)
