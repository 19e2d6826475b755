"""extensions"""
